{{ banner }}
//
// The napi-rs glue of the `uform` npm package, included by `bindings/node/src/lib.rs`: one `#[napi]` class per
// IDL class (the `Compiled*` handles), plain-object conversions for records and enums, and the raw napi callbacks
// the wrapper calls (`FAST`): one per free function, and one per instance method taking the handle number first.
// Arguments are read with the validating helpers of `bindings/node/src/runtime/`; every core error crosses as
// an error whose `code` is the error kind, which the generated `index.js` turns into `UFormError`.
{%- for part in parts %}

{{ part }}
{%- endfor %}

/// The raw callbacks `lib.rs` registers on the module: (JavaScript name, callback).
pub const FAST: &[(&str, sys::napi_callback)] = &[
{%- for (js, rust) in fast %}
    ("{{ js }}", Some({{ rust }})),
{%- endfor %}
];
