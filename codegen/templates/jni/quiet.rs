/// The quiet word of a `{{ class }}`, as a direct `ByteBuffer` that Kotlin reads before a call it may skip.
#[no_mangle]
pub extern "system" fn {{ word }}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) -> jobject {
    runtime::call(&mut env, |env| {
        // SAFETY: Kotlin calls this from the constructor that owns `handle`, before anything can release it.
        let this = unsafe { runtime::borrow::<uform_core::{{ class }}>(handle) };
        runtime::quiet_buffer(env, &this.quiet())
    })
}
{%- for m in methods %}

/// What the quiet word of a `{{ class }}` holds while `{{ m.what }}` would change nothing{% if m.argument.is_some() %}, per argument ordinal{% endif %}.
#[no_mangle]
#[allow(unused_variables)]
pub extern "system" fn {{ m.symbol }}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>{% if let Some(a) = m.argument %}, {{ a.0 }}: jint{% endif %}) -> jint {
    runtime::call(&mut env, |env| {
{%- if let Some(a) = m.argument %}
        let {{ a.0 }} = runtime::variant(&uform_core::{{ a.1 }}::ALL, {{ a.0 }})?;
{%- endif %}
        Ok(uform_core::{{ class }}::{{ m.core }}_quiet_when({% if let Some(a) = m.argument %}{{ a.0 }}{% endif %}) as jint)
    })
}
{%- endfor %}
