import { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import request from 'supertest';
import { createHttpServer } from '../../src/process/http-server';

/**
 * createHttpServer builds on Express's app.handle setting every request's and response's prototype to the app's
 * (app.request, app.response): it makes them on those prototypes, so that the swap changes nothing.
 */
describe('createHttpServer and the app prototypes', () => {
  test('Node makes requests and responses on the app prototypes before Express handles them, and Express leaves them there', async () => {
    const app = express();
    app.get('/probe', (req, res) => {
      res.json({
        requestOnAppPrototype: Object.getPrototypeOf(req) === app.request,
        responseOnAppPrototype: Object.getPrototypeOf(res) === app.response,
        header: req.get('x-probe'),
      });
    });
    const server = createHttpServer(app);
    const arriving: boolean[] = [];
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      arriving.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    });

    const answer = await request(server).get('/probe').set('X-Probe', 'yes');

    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ requestOnAppPrototype: true, responseOnAppPrototype: true, header: 'yes' });
    expect(arriving).toEqual([true, true]);
  });

  test('any other listener gets Node’s own request and response objects', async () => {
    const server = createHttpServer((req, res) => {
      res.end(
        JSON.stringify([Object.getPrototypeOf(req) === IncomingMessage.prototype, Object.getPrototypeOf(res) === ServerResponse.prototype]),
      );
    });
    const answer = await request(server).get('/');
    expect(answer.text).toBe('[true,true]');
  });
});
