/**
 * `toolshed eval --junit` writes XML a CI parses whatever the service named things (issue 43 item 5): control
 * characters in a scenario id, a batch id, a collection or scenario name (XML 1.0 cannot carry most of them, even
 * escaped) are replaced, and markup characters are escaped, in every field.
 */
import test from 'ava';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { junitReport, type ScenarioReport } from '../bin/eval.js';

const hostile = 'a\u0000b\u0001c\u0008d\u000be\u000cf\u001bg\u007f"<&>\']]>--\uFFFE';

test('control characters and markup in every JUnit field still make well-formed XML, read back as written (controls as U+FFFD)', (t) => {
  const scenario: ScenarioReport = {
    scenarioId: `id-${hostile}`,
    name: `name-${hostile}`,
    runs: 2,
    passed: 0,
    failed: 2,
    passRate: 0,
    verdicts: ['fail', 'error'],
    flaky: false,
    regressed: true,
    basePassRate: 1,
  };
  const xml = junitReport(`collection-${hostile}`, `batch-${hostile}`, [scenario]);
  t.true(XMLValidator.validate(xml), String(JSON.stringify(XMLValidator.validate(xml))));
  t.notRegex(
    xml,
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|&#(x0*[0-8bcef]|x0*1[0-9a-f]|0*([0-8]|1[1-9]|2[0-9]|3[01]));/i,
    'no control character, raw or as a reference',
  );
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (n) => ['testcase', 'property'].includes(n) }).parse(xml);
  const suite = doc.testsuites.testsuite;
  const shown = (prefix: string) => `${prefix}-a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg\u007f"<&>']]>--\uFFFD`;
  t.is(suite['@_id'], shown('batch'));
  t.is(suite['@_name'], shown('collection'));
  t.is(suite.properties.property[0]['@_value'], shown('batch'));
  const tc = suite.testcase[0];
  t.is(tc['@_name'], shown('name'));
  t.is(tc['@_classname'], shown('collection'));
  t.is(tc.properties.property.find((p: Record<string, string>) => p['@_name'] === 'scenarioId')['@_value'], shown('id'));
  t.is(tc.failure['@_type'], 'regression');
});
