// client-kinds.mjs: the JS client's table of sampler node kinds (pldp-client.mjs), one line per
// kind: its name in a spec, and the module that describes it (its `KIND`: parser, claims, words,
// sampler and properties, client-nodes.mjs says what each member is). Adding a kind is writing its
// module, client-<kind>.mjs, and adding its line here (clients/js/README.md, "Adding a kind").

export { KIND as attributes } from "./client-attributes.mjs";
export { KIND as cms } from "./client-cms.mjs";
export { KIND as direct } from "./client-direct.mjs";
export { KIND as hadamard } from "./client-hadamard.mjs";
export { KIND as hashed } from "./client-hashed.mjs";
export { KIND as hcms } from "./client-hcms.mjs";
export { KIND as heavy } from "./client-heavy.mjs";
export { KIND as leveled } from "./client-leveled.mjs";
export { KIND as memo } from "./client-memo.mjs";
export { KIND as padding } from "./client-padding.mjs";
export { KIND as subset } from "./client-subset.mjs";
export { KIND as unary } from "./client-unary.mjs";
