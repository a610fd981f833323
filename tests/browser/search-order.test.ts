/**
 * The search page's order agrees with its own badges (issue 47 item 4), in Chromium against the service as `npm start`
 * runs it: every example package, the sentence encoder on (the default; the test helper turns it off otherwise), so
 * the queries of four words or more below are ranked by the fusion of words and meaning.
 * - "send a slack message": the first result has the query's words (before: validateEmail and parseEmailAddresses,
 *   reached only through their package's name, message-tools, came first and said "none of your words");
 * - for every query, no result above the divider says "none of your words" while one with some of them is below it,
 *   and the divider says "fewer of your words" only when that is so;
 * - a tool found by meaning alone still comes first when its meaning is much closer ("which weekday will christmas
 *   be" → dateInfo, over explainCron, which has "weekday").
 * Screenshots at 1366×850 and 390×844.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { settle } from '../helpers/wait.js';
import { DESKTOP, shots, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;

async function metric(name: string): Promise<number> {
  const m = (await svc.api.deps.metrics.scrape()).match(new RegExp(`^${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : Number.NaN;
}

test.before(async (t) => {
  t.timeout(900_000, 'every example package imported and encoded on a loaded machine');
  const examples = fs
    .readdirSync(EXAMPLES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => path.join(EXAMPLES_DIR, e.name));
  ({ svc, browser } = await startWebService({ env: { SEARCH_ENCODER: 'use' }, packages: examples }));
  await svc.api.searchSync.flush();
  // Every tool has its sentence vector: until then a long query is ranked by words alone.
  const tools = (await svc.api.deps.search.status()).documents;
  const state = await settle(
    async () => ({ ready: await metric('toolshed_search_encoder_ready'), waiting: await metric('toolshed_search_encoder_documents_waiting') }),
    (s) => s.ready === 1 && s.waiting === 0,
    { ms: 600_000 },
  );
  if (state.ready !== 1 || state.waiting !== 0) throw new Error(`the encoder did not settle over ${tools} tools: ${JSON.stringify(state)}`);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

interface Shown {
  name: string;
  /** The share of the words its badge gives, 0 when it says "none of your words". */
  share: number;
  related: boolean;
}

/** A search as the page shows it: the results above the divider, those below it (opened), and the divider's text. */
async function searched(page: Page, q: string): Promise<{ above: Shown[]; below: Shown[]; divider: string; noGoodMatch: boolean }> {
  await page.goto(`${svc.url}/search?q=${encodeURIComponent(q)}`);
  await page.getByTestId('ranked').waitFor();
  const read = (list: string) =>
    page
      .getByTestId(list)
      .locator(':scope > li')
      .evaluateAll((items) =>
        items.map((li) => {
          const note = li.querySelector('.pkg')?.textContent ?? '';
          const pct = /matches (\d+)%/.exec(note);
          return { name: li.querySelector('h3')?.textContent ?? '', share: pct ? Number(pct[1]) : 0, related: /none of your words/.test(note) };
        }),
      );
  const above = await read('ranked');
  const more = page.getByTestId('more-results');
  let below: Shown[] = [];
  let divider = '';
  if ((await more.count()) > 0) {
    divider = await more.locator('.divider').innerText();
    await more.getByRole('button', { name: 'Show them' }).click();
    await page.getByTestId('ranked-more').waitFor();
    below = await read('ranked-more');
  }
  return { above, below, divider, noGoodMatch: (await page.getByTestId('no-good-match').count()) > 0 };
}

const listed = (xs: Shown[]) => xs.map((x) => `${x.name} ${x.related ? 'related' : `${x.share}%`}`).join(', ');

test.serial(
  'search results: a result with none of the words never sits above the divider while one with some is below it, and the first result has some of the words',
  async (t) => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = watchPage(page);

    for (const q of ['send a slack message', 'check if a website is up', 'convert csv to json']) {
      const { above, below, divider, noGoodMatch } = await searched(page, q);
      const all = `above: ${listed(above)} | below: ${listed(below)}`;
      t.true(above.length > 0, q);
      if ([...above, ...below].some((x) => !x.related))
        t.deepEqual(
          above.filter((x) => x.related).map((x) => x.name),
          [],
          `"${q}": nothing above the divider says "none of your words" while results with some of them exist (${all})`,
        );
      const fewest = Math.min(...above.map((x) => x.share));
      if (/fewer of your words/.test(divider))
        t.true(
          below.every((x) => x.related || x.share < fewest),
          `"${q}": the divider says the results below share fewer of the words: ${divider} (${all})`,
        );
      if (q === 'send a slack message') {
        // No example tool posts to Slack: first comes one with some of the words ("send", "message"), not an email tool
        // reached only by its package's name (message-tools).
        t.false(above[0].related, `"${q}" opens with ${above[0].name} (${all})`);
        t.false(['validateEmail', 'parseEmailAddresses'].includes(above[0].name), `"${q}" opens with ${above[0].name} (${all})`);
        await shots(page, 'search-order-slack');
      }
      if (q !== 'convert csv to json') t.true(noGoodMatch, `"${q}": the page says that no tool does this well`);
      if (q === 'check if a website is up') await shots(page, 'search-order-website');
      if (q === 'convert csv to json')
        t.deepEqual(
          above
            .slice(0, 2)
            .map((x) => x.name)
            .sort(),
          ['csvToJson', 'jsonToCsv'],
          all,
        );
    }

    // Found by meaning alone and first, when its meaning is much closer than that of the tool with the word.
    const christmas = await searched(page, 'which weekday will christmas be');
    t.is(christmas.above[0]?.name, 'dateInfo', listed(christmas.above));
    t.true(christmas.above[0]?.related, 'and it says it has none of the words');
    t.deepEqual(problems, []);
    await context.close();
  },
);
