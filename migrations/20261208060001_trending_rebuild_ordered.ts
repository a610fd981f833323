import type { Knex } from 'knex';

// trending_rebuild() (migrations/20261207050001; bench:scale's bulk load calls it) writes the same rows, each table's
// in the order of its primary key: a btree filled in key order appends to its rightmost page, instead of touching a
// random page of an index far larger than memory for each of the 10 million (tool, caller) rows of trending_last_seen
// at the volumes. The groups are counted in a temporary table analysed before use. `down` is the unordered
// function as it was.
const FAILED_WEIGHT = 0.25; // TRENDING_WEIGHTS.executionFailed, as in 20261206040001
const TRENDING_LOCK = 4_520_261_207; // as in 20261207050001

const rebuild = (ordered: boolean) => {
  const by = (keys: string) => (ordered ? ` order by ${keys}` : '');
  return `
    create or replace function trending_rebuild() returns void language plpgsql as $$
    begin
      perform pg_advisory_xact_lock(${TRENDING_LOCK});
      truncate trending_last_seen, trending_hourly, trending_daily, trending_totals, trending_period_scores;
      update trending_windows set start = date_trunc('hour', now(), 'UTC') - make_interval(hours => hours - 1);
      create temporary table trending_rebuild_groups on commit drop as
        with keyed as (
          select tool_id, date_trunc('hour', created_at, 'UTC') as hour, weight::numeric as weight, kind,
                 case when kind = 'collection_add' and user_id is not null then 'u' || user_id::text
                      when kind in ('execution_succeeded', 'execution_failed') and caller is not null then 'x' || caller end as who
            from tool_events)
        select tool_id, who, tier, max(hour) as hour, max(w) as w from (
          select tool_id, who, 0 as tier, hour,
                 case when kind = 'execution_succeeded' then least(weight, ${FAILED_WEIGHT}) else weight end as w
            from keyed where who is not null
          union all
          select tool_id, who, 1, hour, weight - ${FAILED_WEIGHT}
            from keyed where who is not null and kind = 'execution_succeeded' and weight > ${FAILED_WEIGHT}) x
         group by 1, 2, 3
        union all
        select tool_id, null, null, hour, weight from keyed where who is null;
      ${ordered ? 'analyze trending_rebuild_groups;' : ''}
      insert into trending_last_seen (tool_id, who, tier, last_hour)
        select tool_id, who, tier, hour from trending_rebuild_groups where who is not null${by('tool_id, who, tier')};
      insert into trending_totals (tool_id, score) select tool_id, sum(w) from trending_rebuild_groups group by 1${by('1')};
      insert into trending_hourly (hour, tool_id, score)
        select hour, tool_id, sum(w) from trending_rebuild_groups group by 1, 2${by('1, 2')};
      insert into trending_daily (day, tool_id, score)
        select date_trunc('day', hour, 'UTC'), tool_id, sum(score) from trending_hourly group by 1, 2${by('1, 2')};
      insert into trending_period_scores (period, tool_id, score)
        select w.period, x.tool_id, sum(x.score) from trending_windows w join trending_hourly x on x.hour >= w.start
         group by 1, 2 having sum(x.score) <> 0${by('1, 2')};
    end $$`;
};

export async function up(knex: Knex): Promise<void> {
  await knex.raw(rebuild(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(rebuild(false));
}
