{{ banner }}
//
// The napi-rs glue of the `uform` npm package, included by `bindings/node/src/lib.rs`: one `#[napi]` class per
// IDL class (the `Compiled*` handles), plain-object conversions for records and enums, one function per free
// function. Arguments are read with the validating helpers of `bindings/node/src/runtime.rs`; every core error
// crosses as a napi error whose `code` is the error kind, which the generated `index.js` turns into `UFormError`.
{%- for part in parts %}

{{ part }}
{%- endfor %}
