{% test sherliic_unique_combination(model, columns) %}
-- combinations of `columns` that occur more than once (dbt_utils.unique_combination_of_columns, offline)
select
    {{ columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
