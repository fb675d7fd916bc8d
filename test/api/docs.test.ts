import request from 'supertest';
import { buildTestApp } from '../helpers/app';
import { checkCapturedTraffic } from '../helpers/traffic-checks';

describe('GET /docs', () => {
  it('serves a page whose scripts and styles all come from this service', async () => {
    const t = await buildTestApp();
    const page = await request(t.server).get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
    expect(sources).toEqual(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js', '/docs/init.js']);
    for (const source of sources) {
      const asset = await request(t.server).get(source);
      expect({ source, status: asset.status }).toEqual({ source, status: 200 });
      expect(asset.text.length).toBeGreaterThan(50);
    }
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('answers 404 for an asset that is not there', async () => {
    const t = await buildTestApp();
    expect((await request(t.server).get('/docs/assets/nothing.js')).status).toBe(404);
  });
});

checkCapturedTraffic();
