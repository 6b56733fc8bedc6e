{{ doc }}typedef struct {{ name }} {{ name }};
