{{ banner }}
// Core's records and enums, included by core/src/types.rs; the stub core of codegen's fixture tests includes the
// same rendering of each fixture.

{{ body }}
