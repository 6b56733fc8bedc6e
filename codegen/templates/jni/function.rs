/// {{ what }}
#[no_mangle]
#[allow(unused_variables, clippy::too_many_arguments, clippy::needless_question_mark)]
pub extern "system" fn {{ name }}<'l>(mut env: JNIEnv<'l>, _class: JClass<'l>{% for p in params %}, {{ p }}{% endfor %}){% if let Some(returns) = returns %} -> {{ returns }}{% endif %} {
    runtime::call(&mut env, |env| {
{%- for line in lets %}
        {{ line }}
{%- endfor %}
{%- if let Some(result) = result %}
        let value = {{ call }};
        Ok({{ result }})
{%- else %}
        {{ call }};
        Ok(())
{%- endif %}
    })
}
