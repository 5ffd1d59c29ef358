import type { BenchContext, Scenario, ScenarioResult } from './scenario.ts';

/** Runs the scenarios in order, logging each result and goal as it lands. */
export async function runScenarios(ctx: BenchContext, scenarios: Scenario[]): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    ctx.log(`scenario ${scenario.id}: ${scenario.title}`);
    const started = performance.now();
    const result = await scenario.run(ctx);
    ctx.log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(result.metrics)}`);
    for (const g of result.goals) ctx.log(`  goal ${g.name} ${g.target}: ${g.value} ${g.met ? 'met' : 'NOT MET'}`);
    results.push(result);
  }
  return results;
}
