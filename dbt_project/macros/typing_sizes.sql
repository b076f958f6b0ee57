{% macro typing_size_parts(pairs, group_columns, instances_column=none) %}
    {#- The parts that sum to the sizes of typed relations |T|, |π1(T)|, |π2(T)| (paper §2.2): classes
        of entity pairs that carry type-rank masks (columns arg1_entity_id,
        arg2_entity_id, arg1_mask, arg2_mask; bit r-1 = the slot's type of rank r). A typing (s, u)
        holds a pair iff bit s-1 of arg1_mask and bit u-1 of arg2_mask are set, and a first argument
        x is in π1 of the typing iff its own mask admits s and the OR of its partners' masks admits u.
        So per group: pairs by (arg1 mask, arg2 mask), first arguments by (own mask, OR of partners'),
        second arguments by (OR of partners', own mask); summing the classes a typing admits gives
        |T|, |π1(T)|, |π2(T)| (and its instances) without going back to pairs or entities.
        Counts are integers: sums of integers aggregate in a bigint, sums of bigints in numeric
        (several times slower on millions of groups).
        `pairs` is read three times: pass a table, or a small CTE (Postgres materialises CTEs read
        more than once). -#}
    {%- set keys = group_columns | join(',\n        ') %}
    select
        {{ keys }},
        arg1_mask,
        arg2_mask,
        cast(sum(n_pairs) as integer) as n_pairs,
        sum(n_instances) as n_instances,
        cast(sum(n_arg1) as integer) as n_arg1_entities,
        cast(sum(n_arg2) as integer) as n_arg2_entities

    from (

        select
            {{ keys }},
            arg1_mask,
            arg2_mask,
            cast(count(*) as integer) as n_pairs,
            {{ 'sum(' ~ instances_column ~ ')' if instances_column else 'cast(0 as bigint)' }} as n_instances,
            0 as n_arg1,
            0 as n_arg2

        from {{ pairs }}
        group by
            {{ keys }},
            arg1_mask,
            arg2_mask

        union all

        select
            {{ keys }},
            max(arg1_mask) as arg1_mask,
            bit_or(arg2_mask) as arg2_mask,
            0 as n_pairs,
            0 as n_instances,
            1 as n_arg1,
            0 as n_arg2

        from {{ pairs }}
        group by
            {{ keys }},
            arg1_entity_id

        union all

        select
            {{ keys }},
            bit_or(arg1_mask) as arg1_mask,
            max(arg2_mask) as arg2_mask,
            0 as n_pairs,
            0 as n_instances,
            0 as n_arg1,
            1 as n_arg2

        from {{ pairs }}
        group by
            {{ keys }},
            arg2_entity_id

    ) as class_rows

    group by
        {{ keys }},
        arg1_mask,
        arg2_mask
{% endmacro %}
