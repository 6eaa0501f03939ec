-- durable_publish_runs(ids): the runs among `ids` that exist, as durable_publish answers them
-- ([{ id, workflow }], in the order given; docs/sql.md, "Migration 0016 and durable_publish").
-- Locks nothing.

create or replace function durable_publish_runs(p_ids text[]) returns jsonb
language sql stable as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'workflow', r.workflow) order by x.n), '[]'::jsonb)
    from unnest(p_ids) with ordinality as x (id, n)
    join durable_runs r on r.id = x.id
$$;
