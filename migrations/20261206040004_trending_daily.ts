import type { Knex } from 'knex';

// Trending by day as well as by hour (issue 45; core/repos/feedback.ts trendingScores): trending_daily is, per (UTC
// day, tool), the sum of trending_hourly's hours of that day, kept by the same trigger with the same moves, so that a
// week or a month reads whole days from it and only the partial first and current days from the hours: at most
// tools × (days + 48) rows instead of tools × 24 × days. Filled from the hours already kept (31 days).
const FAILED_WEIGHT = 0.25; // TRENDING_WEIGHTS.executionFailed, as in 20261206040001

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table trending_daily (
      day timestamptz not null,
      tool_id uuid not null references tools(id) on delete cascade,
      score numeric not null,
      primary key (day, tool_id))`);
  await knex.raw('create index trending_daily_tool on trending_daily (tool_id)');
  await knex.raw(`
    create or replace function tool_events_trending() returns trigger language plpgsql as $$
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
        insert into trending_daily as x (day, tool_id, score) values (date_trunc('day', v_hour, 'UTC'), new.tool_id, new.weight::numeric)
          on conflict (day, tool_id) do update set score = x.score + excluded.score;
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
             on conflict (hour, tool_id) do update set score = x.score + excluded.score),
           days as (
             insert into trending_daily as x (day, tool_id, score)
             select date_trunc('day', hour, 'UTC'), new.tool_id, sum(dw) from d group by 1 having sum(dw) <> 0 order by 1
             on conflict (day, tool_id) do update set score = x.score + excluded.score)
      insert into trending_totals as x (tool_id, score)
      select new.tool_id, sum(w) from moved where prev_hour is null having count(*) > 0
      on conflict (tool_id) do update set score = x.score + excluded.score;
      return null;
    end $$`);
  await knex.raw(`insert into trending_daily (day, tool_id, score)
                  select date_trunc('day', hour, 'UTC'), tool_id, sum(score) from trending_hourly group by 1, 2`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function tool_events_trending() returns trigger language plpgsql as $$
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
  await knex.raw('drop table trending_daily');
}
