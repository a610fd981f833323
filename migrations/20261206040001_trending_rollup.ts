import type { Knex } from 'knex';

// Trending from rollups (issue 45; core/repos/feedback.ts trendingScores): a trigger on tool_events keeps three tables
// in the statement that writes the event, so that a trending request reads at most (tools × hours of its period) rows
// of trending_hourly (day/week/month) or one row per tool of trending_totals (all), never the events, which retention
// may then delete.
//
// The rules are those of the raw computation, in whole UTC hours: over a period, a caller's executions of a tool weigh
// once (the heaviest: 1 if one succeeded, else 0.25), a user's collection adds of a tool once, every other event (a
// rating, a review; old rows with no caller or user) its own weight. Exact for sliding periods by "last seen" rows:
//   trending_last_seen (tool, who, tier) holds the last hour that caller/user was seen for the tool. A caller's
//   executions are two tiers: tier 0 (any execution, weight 0.25) and tier 1 (a success, the 0.75 more), so that the
//   heaviest event in any period is tier 0's weight when it was seen in it plus tier 1's when a success was.
//   trending_hourly (hour, tool) sums, per hour, the weights of the (who, tier) rows last seen in that hour and of the
//   single events of that hour; when a row's last hour moves from p to h, its weight moves from hour p to hour h. So a
//   period's score is the sum of its hours: each (who, tier) counts once, at its last hour, iff seen in the period.
//   trending_totals (tool) sums every weight once (a new (who, tier) row or a single event): the all-time score.
// Weights are numeric (0.6 of a 1-star rating adds and subtracts exactly). Rows are locked in one order (last seen,
// then hours ascending, then the total) so that concurrent events of one tool do not deadlock. Filled from the events
// already there by the same rules.
const FAILED_WEIGHT = 0.25; // TRENDING_WEIGHTS.executionFailed: tier 0 of a caller's executions

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table trending_last_seen (
      tool_id uuid not null references tools(id) on delete cascade,
      who text not null,
      tier smallint not null,
      last_hour timestamptz not null,
      prev_hour timestamptz,
      primary key (tool_id, who, tier))`);
  await knex.raw(`
    create table trending_hourly (
      hour timestamptz not null,
      tool_id uuid not null references tools(id) on delete cascade,
      score numeric not null,
      primary key (hour, tool_id))`);
  await knex.raw('create index trending_hourly_tool on trending_hourly (tool_id)');
  await knex.raw(`
    create table trending_totals (
      tool_id uuid primary key references tools(id) on delete cascade,
      score numeric not null)`);
  await knex.raw('create index trending_totals_score on trending_totals (score desc, tool_id)');
  await knex.raw(`
    create function tool_events_trending() returns trigger language plpgsql as $$
    declare
      v_hour timestamptz := date_trunc('hour', new.created_at, 'UTC');
      v_who text := case when new.kind = 'collection_add' and new.user_id is not null then 'u' || new.user_id::text
                         when new.kind in ('execution_succeeded', 'execution_failed') and new.caller is not null then 'x' || new.caller end;
      v_w0 numeric := new.weight::numeric;
      v_w1 numeric := 0;
    begin
      if v_who is null then
        insert into trending_hourly as x (hour, tool_id, score) values (v_hour, new.tool_id, new.weight::numeric)
          on conflict (hour, tool_id) do update set score = x.score + excluded.score;
        insert into trending_totals as x (tool_id, score) values (new.tool_id, new.weight::numeric)
          on conflict (tool_id) do update set score = x.score + excluded.score;
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
             on conflict (hour, tool_id) do update set score = x.score + excluded.score)
      insert into trending_totals as x (tool_id, score)
      select new.tool_id, sum(w) from moved where prev_hour is null having count(*) > 0
      on conflict (tool_id) do update set score = x.score + excluded.score;
      return null;
    end $$`);
  await knex.raw('create trigger tool_events_trending after insert on tool_events for each row execute function tool_events_trending()');

  // The events already there, by the same rules: each (who, tier) at its last hour with its heaviest weight, each
  // single event at its own hour.
  await knex.raw(`
    with keyed as (
      select tool_id, date_trunc('hour', created_at, 'UTC') as hour, weight::numeric as weight, kind,
             case when kind = 'collection_add' and user_id is not null then 'u' || user_id::text
                  when kind in ('execution_succeeded', 'execution_failed') and caller is not null then 'x' || caller end as who
        from tool_events),
    groups as (
      select tool_id, who, tier, max(hour) as last_hour, max(w) as w from (
        select tool_id, who, 0 as tier, hour,
               case when kind = 'execution_succeeded' then least(weight, ${FAILED_WEIGHT}) else weight end as w
          from keyed where who is not null
        union all
        select tool_id, who, 1, hour, weight - ${FAILED_WEIGHT}
          from keyed where who is not null and kind = 'execution_succeeded' and weight > ${FAILED_WEIGHT}) x
       group by 1, 2, 3),
    ls as (insert into trending_last_seen (tool_id, who, tier, last_hour) select tool_id, who, tier, last_hour from groups),
    weights as (
      select tool_id, last_hour as hour, w from groups
      union all
      select tool_id, hour, weight from keyed where who is null),
    h as (insert into trending_hourly (hour, tool_id, score) select hour, tool_id, sum(w) from weights group by 1, 2)
    insert into trending_totals (tool_id, score) select tool_id, sum(w) from weights group by 1`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger tool_events_trending on tool_events');
  await knex.raw('drop function tool_events_trending()');
  await knex.raw('drop table trending_totals');
  await knex.raw('drop table trending_hourly');
  await knex.raw('drop table trending_last_seen');
}
