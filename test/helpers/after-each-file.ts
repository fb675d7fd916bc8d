import { captured } from './capture';
import { openApiProblems } from './openapi-check';

/** Every key, secret and token the tests and the demo seed use. */
const SECRETS = [
  'pk_test_acme_1',
  'sk_test_acme_1',
  'pk_test_other_1',
  'sk_test_other_1',
  'pk_demo_PDR28_7f3a9c2e',
  'sk_demo_PDR28_d41b8e60',
  'pk_demo_HTL07_19be44a0',
  'sk_demo_HTL07_a8c2f513',
  'admin-test-token-0123456789',
  'demo-admin-token-0001',
];

/** After every test file: no key or secret in any log line or response body. */
afterAll(() => {
  const texts = [...captured.logLines, ...captured.bodies];
  const leaks = texts.filter((text) => SECRETS.some((secret) => text.includes(secret))).map((text) => text.slice(0, 300));
  if (texts.length > 0) {
    process.stdout.write(`secret scan: ${captured.logLines.length} log lines, ${captured.bodies.length} response bodies, ${leaks.length} leaks\n`);
  }
  expect(leaks).toEqual([]);
});

/** After every test file: every response the app sent (but OPTIONS and HEAD) is what the OpenAPI document says. */
afterAll(() => {
  const checked = captured.responses.filter((response) => response.method !== 'OPTIONS' && response.method !== 'HEAD');
  const problems = checked.flatMap(openApiProblems);
  if (checked.length > 0) process.stdout.write(`openapi check: ${checked.length} responses, ${problems.length} problems\n`);
  expect(problems.slice(0, 20)).toEqual([]);
});
