/// Drops the handle of a `{{ class }}` once Kotlin holds no use of it (closed or collected, no call in flight).
#[no_mangle]
pub extern "system" fn {{ name }}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>, handle: jlong) {
    runtime::call(&mut env, |_| {
        // SAFETY: Kotlin's NativeHandle calls this once, after the last use of `handle`.
        unsafe { runtime::release::<uform_core::{{ class }}>(handle, {{ free }}) };
        Ok(())
    })
}
