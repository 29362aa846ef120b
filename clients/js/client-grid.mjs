// client-grid.mjs: the JS client's integer-threshold sampling grid (pldp-client.mjs): every
// probability a numerator over 2^32, every decision an integer comparison of a uniform 32-bit
// word (docs/wire-format.md §2), the words drawn from the platform CSPRNG (crypto.getRandomValues)
// or from an injected source, buffered in the order of the wire format.

import { HEX } from "./client-wire.mjs";

/** 2**32: every sampler probability is a numerator over this grid. */
export const GRID = 4294967296;
export const GRID_N = 4294967296n;
export const GRID_BITS = 32;
/** Words of a report id (128 bits). */
export const ID_WORDS = 4;
const CHUNK_WORDS = 16384; // crypto.getRandomValues fills at most 65536 bytes per call

/** n uniform words from the platform CSPRNG. */
function cryptoWords(n) {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i += CHUNK_WORDS) globalThis.crypto.getRandomValues(out.subarray(i, Math.min(n, i + CHUNK_WORDS)));
  return out;
}

/**
 * A client's stream of uniform 32-bit words: `random(n)` (default {@link cryptoWords}, then read
 * in chunks of 16384 words) buffered so that a report's words are at hand in one array. The
 * samplers read `buf` from `pos` after {@link Words#ensure} and move `pos` past what they used.
 */
export class Words {
  #random;
  #crypto;
  buf = new Uint32Array(0);
  pos = 0;

  /** @param {function(number): Uint32Array} [random] An injected source (tests), else the CSPRNG. */
  constructor(random) {
    this.#crypto = random === undefined;
    this.#random = random ?? cryptoWords;
  }

  /** Make sure n words are buffered from the current position. */
  ensure(n) {
    const have = this.buf.length - this.pos;
    if (have >= n) return;
    const want = this.#crypto ? Math.max(CHUNK_WORDS, n - have) : n - have;
    let more = this.#random(want);
    if (!(more instanceof Uint32Array)) {
      if (!more || typeof more.length !== "number") throw new TypeError("random(n) must return a Uint32Array");
      for (let i = 0; i < more.length; i++) {
        const v = more[i];
        if (!Number.isInteger(v) || v < 0 || v >= GRID) throw new TypeError("random(n) must return 32-bit unsigned words");
      }
      more = Uint32Array.from(more);
    }
    if (more.length !== want) throw new TypeError(`random(${want}) returned ${more.length} words`);
    const buf = new Uint32Array(have + want);
    buf.set(this.buf.subarray(this.pos));
    buf.set(more, have);
    this.buf = buf;
    this.pos = 0;
  }

  /** The next word. */
  word() {
    this.ensure(1);
    return this.buf[this.pos++];
  }

  /** Exact uniform integer in [0, m) by rejection (docs §2, padding). */
  uniform(m) {
    const limit = GRID - (GRID % m);
    for (;;) {
      const w = this.word();
      if (w < limit) return w % m;
    }
  }

  /** The report id from the next ID_WORDS words (buffered by the caller). */
  id() {
    const buf = this.buf;
    const p = this.pos;
    let id = "";
    for (let i = 0; i < ID_WORDS; i++) {
      const w = buf[p + i];
      id += HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
    }
    this.pos = p + ID_WORDS;
    return id;
  }
}
