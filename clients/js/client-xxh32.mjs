// client-xxh32.mjs: XXH32 of a byte string (pldp.xxh32), the hash of a spec's free-text answers
// (client-labels.mjs, docs/wire-format.md §1.5). Every operation modulo 2**32 (Math.imul, >>> 0).

// PRIME32_1 to PRIME32_5 of the specification
const [P1, P2, P3, P4, P5] = [0x9e3779b1, 0x85ebca77, 0xc2b2ae3d, 0x27d4eb2f, 0x165667b1];

const rotl = (x, r) => ((x << r) | (x >>> (32 - r))) >>> 0;
const lane = (b, i) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
const round = (acc, x) => Math.imul(rotl((acc + Math.imul(x, P2)) >>> 0, 13), P1) >>> 0;

/**
 * XXH32 of `bytes` (a Uint8Array) with `seed` (an unsigned 32-bit integer, default 0), as the
 * specification defines it: an unsigned 32-bit integer. XXH32("abc") = 0x32d153ff.
 */
export function xxh32(bytes, seed = 0) {
  const n = bytes.length;
  let i = 0;
  let h;
  if (n >= 16) {
    const v = [(seed + P1 + P2) >>> 0, (seed + P2) >>> 0, seed >>> 0, (seed - P1) >>> 0];
    for (; i + 16 <= n; i += 16) {
      for (let k = 0; k < 4; k++) v[k] = round(v[k], lane(bytes, i + 4 * k));
    }
    h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) >>> 0;
  } else {
    h = (seed + P5) >>> 0;
  }
  h = (h + n) >>> 0;
  for (; i + 4 <= n; i += 4) h = Math.imul(rotl((h + Math.imul(lane(bytes, i), P3)) >>> 0, 17), P4) >>> 0;
  for (; i < n; i++) h = Math.imul(rotl((h + Math.imul(bytes[i], P5)) >>> 0, 11), P1) >>> 0;
  return avalanche(h);
}

/** XXH32's final mix of the accumulator `h` (client-hashed.mjs's 4-byte case ends with it too). */
export function avalanche(h) {
  h ^= h >>> 15;
  h = Math.imul(h, P2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, P3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}
