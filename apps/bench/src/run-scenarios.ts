import { goalFigure, goalVerdict, type BenchContext, type Scenario, type ScenarioResult } from './scenario.ts';

/** Runs the scenarios in order, logging each result and goal as it lands. */
export async function runScenarios(ctx: BenchContext, scenarios: Scenario[]): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    ctx.log(`scenario ${scenario.id}: ${scenario.title}`);
    const started = performance.now();
    const result = await scenario.run(ctx);
    ctx.log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(result.metrics)}`);
    // One line a goal: the figure (the median where it ran several times) with its run-to-run range, and whether every run met it.
    for (const g of result.goals) ctx.log(`  goal ${g.name} ${g.target}: ${goalFigure(g)} ${goalVerdict(g)}`);
    results.push(result);
  }
  return results;
}
