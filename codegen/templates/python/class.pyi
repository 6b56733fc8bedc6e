@final
class {{ name }}:
    """{{ doc }}"""
{%- for m in members %}

{{ m }}
{%- endfor %}

    @property
    def compiled(self) -> {{ name }}:
        """{{ compiled_doc }}"""
{%- if has_free %}

    def __enter__(self) -> {{ name }}: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...
{%- endif %}
