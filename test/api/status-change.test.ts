import { describeOnEveryStore } from '../helpers/app';
import * as client from '../helpers/clients';
import { OTHER, TOKENS } from '../helpers/fixtures';
import { errorBody } from '../helpers/http';
import { statusChange } from '../helpers/payloads';
import { expectRejection, readState, readToken } from '../helpers/state';

describeOnEveryStore('Status Change', (current) => {
  const statusOf = async (tokenId: string) => (await readToken(current().store, tokenId))?.status;

  async function expectRejected(body: object, status: number, expectedBody: object) {
    await expectRejection(current().store, () => client.statusChange(current(), body), status, expectedBody);
  }

  it('answers 200 with the exact success body and sets the status', async () => {
    const response = await client.statusChange(current(), statusChange());
    expect(response.status).toBe(200);
    expect(response.text).toBe('{"success":true,"message":"Success"}');
    expect(await statusOf(TOKENS.active.token_id)).toBe('freezed');
  });

  it('without share_public, answers 401 and changes nothing: a keyless request could delete any token for good', async () => {
    await expectRejected(statusChange({ share_public: undefined, tokes_status: 'deleted' }), 401, errorBody(401, 'Unauthorized'));
    await expectRejected(
      statusChange({ share_public: undefined, source_id: 'NOBODY', tokes_status: 'deleted' }),
      401,
      errorBody(401, 'Unauthorized'),
    );
  });

  it('accepts token_id as a string and token_status as an alias of tokes_status', async () => {
    await client
      .statusChange(current(), statusChange({ token_id: TOKENS.active.token_id, tokes_status: undefined, token_status: 'disputed' }))
      .expect(200);
    expect(await statusOf(TOKENS.active.token_id)).toBe('disputed');
  });

  it('accepts both spellings when they agree', async () => {
    await client.statusChange(current(), statusChange({ tokes_status: 'deleted', token_status: 'deleted' })).expect(200);
    expect(await statusOf(TOKENS.active.token_id)).toBe('deleted');
  });

  it.each([
    ['active', 'freezed'],
    ['freezed', 'active'],
    ['freezed', 'disputed'],
    ['disputed', 'active'],
    ['disputed', 'deleted'],
    ['freezed', 'deleted'],
  ] as const)('moves a token from %s to %s', async (from, to) => {
    const tokenId = from === 'active' ? TOKENS.active.token_id : TOKENS[from].token_id;
    await client.statusChange(current(), statusChange({ token_id: tokenId, tokes_status: to })).expect(200);
    expect(await statusOf(tokenId)).toBe(to);
  });

  it('without a status, answers 200 and changes nothing', async () => {
    const before = await readState(current().store);
    await client.statusChange(current(), statusChange({ tokes_status: undefined })).expect(200);
    expect(await readState(current().store)).toEqual(before);
  });

  it.each(['status', 'token_stats', 'Status', 'tokes_Status', 'new_status', 'STAT'])(
    'a body with an unknown field %j that says stat(us) is a 400 naming it and the status field, and changes nothing',
    async (field) => {
      await expectRejected(
        { ...statusChange({ tokes_status: undefined }), [field]: 'freezed' },
        400,
        errorBody(400, `Invalid field: ${field}`, [
          { field, message: 'is an unknown field: the status is tokes_status (or its alias token_status)' },
        ]),
      );
    },
  );

  it('other unknown fields are still ignored', async () => {
    await client.statusChange(current(), { ...statusChange(), note: 'x', tokes: 'freezed' }).expect(200);
    expect(await statusOf(TOKENS.active.token_id)).toBe('freezed');
  });

  it('setting the status a token already has answers 200 and changes nothing, even for deleted', async () => {
    const before = await readState(current().store);
    await client.statusChange(current(), statusChange({ tokes_status: 'active' })).expect(200);
    await client.statusChange(current(), statusChange({ token_id: TOKENS.deleted.token_id, tokes_status: 'deleted' })).expect(200);
    expect(await readState(current().store)).toEqual(before);
  });

  it.each(['active', 'freezed', 'disputed'] as const)('409 when a deleted token would become %s', async (to) => {
    await expectRejected(
      statusChange({ token_id: TOKENS.deleted.token_id, tokes_status: to }),
      409,
      errorBody(409, `Token is deleted; a deleted token cannot become ${to}`),
    );
  });

  it('400 when tokes_status and token_status disagree', async () => {
    await expectRejected(
      statusChange({ tokes_status: 'active', token_status: 'freezed' }),
      400,
      errorBody(400, 'Invalid field: token_status', [{ field: 'token_status', message: 'must equal tokes_status when both are sent' }]),
    );
  });

  it('400 for a status in the wrong case, naming the allowed values', async () => {
    await expectRejected(
      statusChange({ tokes_status: 'Active' }),
      400,
      errorBody(400, 'Invalid field: tokes_status', [
        { field: 'tokes_status', message: 'must be one of active, freezed, disputed, deleted' },
      ]),
    );
  });

  it('400 naming every bad field at once', async () => {
    await expectRejected(
      { read_event: 'token.withdrawn_created', source_id: 7, token_id: '0', tokes_status: 'gone' },
      400,
      errorBody(400, 'Invalid fields: read_event, source_id, destination_id, token_id, tokes_status', [
        {
          field: 'read_event',
          message:
            'is "token.withdrawn_created", which POST /v1/tokens/withdraw (or POST /v1/events) takes; this route takes "token.status_changed"',
        },
        { field: 'source_id', message: 'must be a string' },
        { field: 'destination_id', message: 'is required' },
        { field: 'token_id', message: 'must be a positive integer or a string of 1 to 32 digits without a leading zero' },
        { field: 'tokes_status', message: 'must be one of active, freezed, disputed, deleted' },
      ]),
    );
  });

  it('400 for a 32 KB body of 2,198 unknown status fields lists the first 30 and the count: a small answer, nothing changed', async () => {
    const statField = (i: number) => `stat_${String(i).padStart(4, '0')}`;
    const typos = Object.fromEntries(Array.from({ length: 2198 }, (_, i) => [statField(i), 0]));
    const body = { ...statusChange(), ...typos };
    expect(Buffer.byteLength(JSON.stringify(body))).toBeGreaterThan(30 * 1024);
    const typo = 'is an unknown field: the status is tokes_status (or its alias token_status)';
    const listed = Array.from({ length: 30 }, (_, i) => statField(i));
    const expectedBody = {
      success: 'false',
      errors: {
        code: '400',
        message: `Invalid fields: ${listed.join(', ')} and 2168 more`,
        details: listed.map((field) => ({ field, message: typo })),
        details_total: 2198,
      },
    };
    await expectRejected(body, 400, expectedBody);
    // The rule's bound, whatever the request: 30 problems of a field cut to 64 characters and a message cut to 400,
    // and a message naming those 30 fields.
    const response = await client.statusChange(current(), body);
    expect(Buffer.byteLength(response.text)).toBeLessThanOrEqual(30 * (64 + 400 + 40) + 30 * 66 + 200);
  });

  it('401 when share_public is present and wrong, or the account is unknown', async () => {
    await expectRejected(statusChange({ share_public: 'pk_wrong' }), 401, errorBody(401, 'Unauthorized'));
    await expectRejected(statusChange({ share_public: OTHER.share_public }), 401, errorBody(401, 'Unauthorized'));
    await expectRejected(statusChange({ source_id: 'NOBODY', share_public: undefined }), 401, errorBody(401, 'Unauthorized'));
  });

  it('413 when the destination is not registered under the caller', async () => {
    await expectRejected(statusChange({ destination_id: 'X1' }), 413, errorBody(413, 'Destination ID Unknown'));
  });

  it.each([
    ['does not exist', { token_id: 424242 }],
    ['belongs to another account', { token_id: TOKENS.others.token_id }],
    ['is at another destination', { token_id: TOKENS.atD2.token_id }],
  ])('428 when the token %s', async (_situation, change) => {
    await expectRejected(statusChange(change), 428, errorBody(428, "Token ID doesn't match"));
  });

  it('checks the token (428) before the transition (409)', async () => {
    const response = await client.statusChange(current(), statusChange({ token_id: 424242, tokes_status: 'active' }));
    expect(response.status).toBe(428);
  });
});

describeOnEveryStore(
  'Status Change with ALLOW_KEYLESS_STATUS_CHANGE',
  (current) => {
    it('works without share_public for an account that exists; an unknown account is still a 401', async () => {
      await client.statusChange(current(), statusChange({ share_public: undefined, tokes_status: 'disputed' })).expect(200);
      expect((await readToken(current().store, TOKENS.active.token_id))?.status).toBe('disputed');
      await client.statusChange(current(), statusChange({ share_public: undefined, source_id: 'NOBODY' })).expect(401);
      await client.statusChange(current(), statusChange({ share_public: 'pk_wrong' })).expect(401);
    });
  },
  { config: { allowKeylessStatusChange: true } },
);
