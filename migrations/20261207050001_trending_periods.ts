import type { Knex } from 'knex';

// Trending by period score (issue 45, core/repos/feedback.ts trendingScores): a trending request for a day, a week or
// a month reads `limit` rows of an index, whatever the history and the number of tools, instead of tools × (days + 48)
// rows of trending_daily and trending_hourly.
//   trending_windows (period) holds the first hour of each sliding period's window (day: 24 hours, week: 168, month:
//   720), and trending_period_scores (period, tool) the sum of trending_hourly's rows of that tool from that hour on:
//   the tool's score over the period. The tool_events trigger adds each of its hourly moves (a caller's or user's weight
//   leaving its previous hour, arriving at its new one; a single event's weight) to every period whose window holds
//   that hour, in the statement that writes the event, so the same rules hold (one weight per caller and tool per
//   period, a collection add once per user): a period's score is the sum of its hours.
//   trending_advance(at) moves the windows on to the hour `at` is in: each tool's score loses the hours that left the
//   window (the rows of trending_hourly of those hours: the tools active then, not the history). A request advances
//   them before it reads (a no-op within the hour); the retention sweep too, and keeps every hour from the earliest
//   window's start (core/repos/retention.ts). Moves and advances exclude each other by an advisory lock (shared for
//   the trigger, exclusive for an advance, taken first), so an advance never misses a move nor subtracts one twice.
// trending_rebuild() builds every rollup (last seen, hours, days, totals, period scores) from tool_events by one
// INSERT…SELECT GROUP BY each with the same rules as 20261206040001's fill: bench:scale seeds with the trigger
// disabled and then calls it.
const FAILED_WEIGHT = 0.25; // TRENDING_WEIGHTS.executionFailed, as in 20261206040001
export const TRENDING_LOCK = 4_520_261_207; // pg_advisory_xact_lock key shared by the trigger and trending_advance

const TRIGGER = (withPeriods: boolean) => `
    create or replace function tool_events_trending() returns trigger language plpgsql as $$
    declare
      v_hour timestamptz := date_trunc('hour', new.created_at, 'UTC');
      v_who text := case when new.kind = 'collection_add' and new.user_id is not null then 'u' || new.user_id::text
                         when new.kind in ('execution_succeeded', 'execution_failed') and new.caller is not null then 'x' || new.caller end;
      v_w0 numeric := new.weight::numeric;
      v_w1 numeric := 0;
    begin
      ${withPeriods ? `perform pg_advisory_xact_lock_shared(${TRENDING_LOCK});` : ''}
      if v_who is null then
        insert into trending_hourly as x (hour, tool_id, score) values (v_hour, new.tool_id, new.weight::numeric)
          on conflict (hour, tool_id) do update set score = x.score + excluded.score;
        insert into trending_daily as x (day, tool_id, score) values (date_trunc('day', v_hour, 'UTC'), new.tool_id, new.weight::numeric)
          on conflict (day, tool_id) do update set score = x.score + excluded.score;
        insert into trending_totals as x (tool_id, score) values (new.tool_id, new.weight::numeric)
          on conflict (tool_id) do update set score = x.score + excluded.score;
        ${
          withPeriods
            ? `insert into trending_period_scores as x (period, tool_id, score)
          select w.period, new.tool_id, new.weight::numeric from trending_windows w where v_hour >= w.start order by w.period
          on conflict (period, tool_id) do update set score = x.score + excluded.score;`
            : ''
        }
        return null;
      end if;
      if new.kind = 'execution_succeeded' then
        v_w0 := least(new.weight::numeric, ${FAILED_WEIGHT});
        v_w1 := new.weight::numeric - v_w0;
      end if;
      with t(tier, w) as (select 0, v_w0 union all select 1, v_w1 where v_w1 > 0),
           seen as (
             insert into trending_last_seen as s (tool_id, who, tier, last_hour)
             select new.tool_id, v_who, t.tier, v_hour from t order by t.tier
             on conflict (tool_id, who, tier) do update
               set prev_hour = s.last_hour, last_hour = greatest(s.last_hour, excluded.last_hour)
             returning s.tier, s.prev_hour, s.last_hour),
           moved as (select seen.*, t.w from seen join t on t.tier = seen.tier),
           d as (select prev_hour as hour, -w as dw from moved where prev_hour < last_hour
                 union all
                 select last_hour, w from moved where prev_hour is null or prev_hour < last_hour),
           hours as (
             insert into trending_hourly as x (hour, tool_id, score)
             select hour, new.tool_id, sum(dw) from d group by hour order by hour
             on conflict (hour, tool_id) do update set score = x.score + excluded.score),
           ${
             withPeriods
               ? `periods as (
             insert into trending_period_scores as x (period, tool_id, score)
             select w.period, new.tool_id, sum(d.dw) from d join trending_windows w on d.hour >= w.start
              group by w.period having sum(d.dw) <> 0 order by w.period
             on conflict (period, tool_id) do update set score = x.score + excluded.score),`
               : ''
           }
           days as (
             insert into trending_daily as x (day, tool_id, score)
             select date_trunc('day', hour, 'UTC'), new.tool_id, sum(dw) from d group by 1 having sum(dw) <> 0 order by 1
             on conflict (day, tool_id) do update set score = x.score + excluded.score)
      insert into trending_totals as x (tool_id, score)
      select new.tool_id, sum(w) from moved where prev_hour is null having count(*) > 0
      on conflict (tool_id) do update set score = x.score + excluded.score;
      return null;
    end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table trending_windows (
      period text primary key,
      hours int not null,
      start timestamptz not null)`);
  await knex.raw(`
    create table trending_period_scores (
      period text not null references trending_windows(period),
      tool_id uuid not null references tools(id) on delete cascade,
      score numeric not null,
      primary key (period, tool_id))`);
  await knex.raw('create index trending_period_scores_rank on trending_period_scores (period, score desc, tool_id)');
  await knex.raw('create index trending_period_scores_tool on trending_period_scores (tool_id)');
  await knex.raw(`insert into trending_windows (period, hours, start)
                  select p, h, date_trunc('hour', now(), 'UTC') - make_interval(hours => h - 1)
                    from (values ('day', 24), ('week', 168), ('month', 720)) v(p, h)`);
  await knex.raw(`insert into trending_period_scores (period, tool_id, score)
                  select w.period, x.tool_id, sum(x.score) from trending_windows w join trending_hourly x on x.hour >= w.start
                   group by 1, 2 having sum(x.score) <> 0`);
  await knex.raw(`
    create function trending_advance(p_at timestamptz) returns void language plpgsql as $$
    declare
      w record;
      v_start timestamptz;
    begin
      if not exists (select 1 from trending_windows
                      where start < date_trunc('hour', p_at, 'UTC') - make_interval(hours => hours - 1)) then
        return;
      end if;
      perform pg_advisory_xact_lock(${TRENDING_LOCK});
      for w in select * from trending_windows order by period for update loop
        v_start := date_trunc('hour', p_at, 'UTC') - make_interval(hours => w.hours - 1);
        continue when v_start <= w.start;
        update trending_period_scores x set score = x.score - h.s
          from (select tool_id, sum(score) as s from trending_hourly where hour >= w.start and hour < v_start group by tool_id) h
         where x.period = w.period and x.tool_id = h.tool_id;
        delete from trending_period_scores where period = w.period and score = 0;
        update trending_windows set start = v_start where period = w.period;
      end loop;
    end $$`);
  await knex.raw(`
    create function trending_rebuild() returns void language plpgsql as $$
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
      insert into trending_last_seen (tool_id, who, tier, last_hour)
        select tool_id, who, tier, hour from trending_rebuild_groups where who is not null;
      insert into trending_totals (tool_id, score) select tool_id, sum(w) from trending_rebuild_groups group by 1;
      insert into trending_hourly (hour, tool_id, score)
        select hour, tool_id, sum(w) from trending_rebuild_groups group by 1, 2;
      insert into trending_daily (day, tool_id, score)
        select date_trunc('day', hour, 'UTC'), tool_id, sum(score) from trending_hourly group by 1, 2;
      insert into trending_period_scores (period, tool_id, score)
        select w.period, x.tool_id, sum(x.score) from trending_windows w join trending_hourly x on x.hour >= w.start
         group by 1, 2 having sum(x.score) <> 0;
    end $$`);
  await knex.raw(TRIGGER(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(TRIGGER(false));
  await knex.raw('drop function trending_rebuild()');
  await knex.raw('drop function trending_advance(timestamptz)');
  await knex.raw('drop table trending_period_scores');
  await knex.raw('drop table trending_windows');
}
