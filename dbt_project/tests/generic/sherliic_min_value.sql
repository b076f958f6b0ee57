{% test sherliic_min_value(model, column_name, min_value) %}
-- rows whose value is below min_value (nulls are left to not_null)
select *
from {{ model }}
where {{ column_name }} < {{ min_value }}
{% endtest %}
