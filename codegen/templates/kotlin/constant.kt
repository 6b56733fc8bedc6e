private val {{ cache }}: {{ ty }} by lazy { {{ call }} }

{{ doc }}fun {{ name }}(): {{ ty }} = {{ cache }}
