import { captured } from './capture';
import { openApiProblems } from './openapi-check';

/** Every key, secret and token the tests and the demo seed use. */
const SECRETS = [
  'pk_test_acme_1',
  'sk_test_acme_1',
  'pk_test_other_1',
  'sk_test_other_1',
  'pk_test_signer_1',
  'sk_test_signer_1',
  'pk_demo_PDR28_7f3a9c2e',
  'sk_demo_PDR28_d41b8e60',
  'pk_demo_HTL07_19be44a0',
  'sk_demo_HTL07_a8c2f513',
  'admin-test-token-0123456789',
  'demo-admin-token-0001',
];

/**
 * The checks of all the traffic a test file captured, registered once for the api and process projects
 * (jest.config.js, setupFilesAfterEnv): after every test of the file, no key or secret in any log line, response
 * body or change its requests recorded, and every response (but OPTIONS and HEAD) is what the OpenAPI document says. A file that
 * captured nothing (its suites were skipped, or it serves no HTTP) has nothing to check; one that did must
 * have captured some traffic.
 */
export function checkCapturedTrafficAfterAll(): void {
  afterAll(() => {
    if (!captured.capturing) return;
    const texts = [...captured.logLines, ...captured.bodies, ...captured.changes];
    const leaks = texts.filter((text) => SECRETS.some((secret) => text.includes(secret))).map((text) => text.slice(0, 300));
    expect(texts.length).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  });

  afterAll(() => {
    if (!captured.capturing) return;
    const checked = captured.responses.filter((response) => response.method !== 'OPTIONS' && response.method !== 'HEAD');
    expect(checked.flatMap(openApiProblems).slice(0, 20)).toEqual([]);
  });
}
