import type { Knex } from 'knex';

// Every completed run counts in a scenario's statistics, whoever ran it (SPEC.md, Scenarios; core/repos/scenarios.ts
// recordRunStats). Until now only runs by the collection's owner counted, so statistics recorded before disagree with
// the run history: recompute them once from the completed runs, by the rules recordRunStats applies run after run
// (newest first: completed_at desc, id desc): totalRuns, lastRunAt and lastRunStatus of the newest, the consecutive
// passes or fails at the head, and qualityScore = (passes + 1) / (runs + 2) over the newest 20. A scenario with no
// completed run keeps its initial statistics (0, null, null, 0, 0, 0.5).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    with ranked as (
      select scenario_id, success is true as passed, completed_at,
             row_number() over (partition by scenario_id order by completed_at desc, id desc) as rn
        from scenario_runs
       where status = 'completed'
    ), stats as (
      select scenario_id,
             count(*) as total,
             max(completed_at) filter (where rn = 1) as last_at,
             bool_or(passed) filter (where rn = 1) as last_passed,
             coalesce(min(rn) filter (where not passed), count(*) + 1) - 1 as passes,
             coalesce(min(rn) filter (where passed), count(*) + 1) - 1 as fails,
             (count(*) filter (where rn <= 20 and passed) + 1)::float8 / (count(*) filter (where rn <= 20) + 2) as quality
        from ranked
       group by scenario_id
    )
    update scenarios s set
           total_runs = st.total,
           last_run_at = st.last_at,
           last_run_status = case when st.last_passed then 'pass' else 'fail' end,
           consecutive_passes = st.passes,
           consecutive_fails = st.fails,
           quality_score = st.quality
      from stats st
     where s.id = st.scenario_id`);
}

// Which of the old counts were the owner's is not worth restoring: going back leaves the recomputed figures.
export async function down(): Promise<void> {}
