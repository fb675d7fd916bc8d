import request from 'supertest';
import { buildTestApp } from '../helpers/app';
import { errorBody } from '../helpers/http';

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

  it('does not ask the browser to upgrade to https: the service speaks plain HTTP, and the page stays whole by any host name', async () => {
    const t = await buildTestApp();
    for (const path of ['/docs', '/docs/init.js', '/docs/assets/swagger-ui-bundle.js']) {
      const answer = await request(t.server).get(path).set('Host', 'receiver.test');
      expect({ path, csp: answer.headers['content-security-policy'] }).toEqual({
        path,
        csp: expect.not.stringContaining('upgrade-insecure-requests'),
      });
      expect(answer.headers['content-security-policy']).toContain("default-src 'self'");
    }
  });

  it('serves only the files the page loads: the package sample page, its package.json and source maps are 404', async () => {
    const t = await buildTestApp();
    const others = [
      '/docs/assets/nothing.js',
      '/docs/assets/index.html',
      '/docs/assets/package.json',
      '/docs/assets/swagger-ui-bundle.js.map',
      '/docs/assets/swagger-initializer.js',
      '/docs/assets/',
    ];
    for (const other of others) {
      const answer = await request(t.server).get(other);
      expect({ other, status: answer.status, body: answer.body }).toEqual({ other, status: 404, body: errorBody(404, 'Not Found') });
    }
  });
});
