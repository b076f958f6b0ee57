{% test sherliic_in_range(model, column_name, min_value, max_value, min_inclusive=true, max_inclusive=true) %}
-- rows outside [min_value, max_value] (open ends when *_inclusive is false)
select *
from {{ model }}
where {{ column_name }} {{ '<' if min_inclusive else '<=' }} {{ min_value }}
   or {{ column_name }} {{ '>' if max_inclusive else '>=' }} {{ max_value }}
{% endtest %}
