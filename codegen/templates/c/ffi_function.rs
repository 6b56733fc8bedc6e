#[no_mangle]
pub unsafe extern "C" fn {{ c_name }}({{ params }}){{ returns }} {
    {{ guard }}("{{ c_name }}", || {
{%- for line in body %}
        {{ line }}
{%- endfor %}
    })
}
