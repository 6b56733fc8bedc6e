{%- if input %}
impl FromJs for {{ core }} {
    fn from_js(value: Js, argument: &str) -> Result<Self> {
{%- if required %}
        let Some(object) = record(value, argument)? else {
            return Err(invalid(argument, format!("is required, got {}", value.describe())));
        };
{%- else %}
        let Some(object) = record(value, argument)? else { return Ok(Default::default()) };
{%- endif %}
        fields_of(argument, || {
            Ok({{ core }} {
{%- for f in fields %}
                {{ f.rust }}: {{ f.read }},
{%- endfor %}
            })
        })
    }
}
{% endif %}
{%- if writable %}
impl ToJs for {{ core }} {
    fn to_js(&self, env: sys::napi_env) -> Result<sys::napi_value> {
        let object = Object::new(env)?;
{%- for f in fields %}
        {{ f.write }}?;
{%- endfor %}
        Ok(object.finish())
    }
}
{%- endif %}
