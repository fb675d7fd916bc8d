import {
  ConflictError,
  DestinationUnknownError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  StoreTimeoutError,
  TokenMismatchError,
  TooManyRequestsError,
  toErrorResponse,
  UnauthorizedError,
  UnprocessableError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../../src/errors';

describe('toErrorResponse', () => {
  it.each([
    [new ValidationError('Invalid field: x', [{ field: 'x', message: 'is required' }]), 400, 'Invalid field: x'],
    [new UnauthorizedError(), 401, 'Unauthorized'],
    [new ForbiddenError('no'), 403, 'no'],
    [new NotFoundError(), 404, 'Not Found'],
    [new MethodNotAllowedError(['POST']), 405, 'Method Not Allowed: use POST'],
    [new MethodNotAllowedError(['GET', 'POST']), 405, 'Method Not Allowed: use GET or POST'],
    [new MethodNotAllowedError(['POST', 'PATCH', 'DELETE']), 405, 'Method Not Allowed: use POST, PATCH or DELETE'],
    [new ConflictError('busy', 'in_flight'), 409, 'busy'],
    [new DestinationUnknownError(), 413, 'Destination ID Unknown'],
    [new PayloadTooLargeError(32 * 1024), 413, 'Payload Too Large: the limit is 32kb'],
    [new PayloadTooLargeError(1000), 413, 'Payload Too Large: the limit is 1000b'],
    [new UnsupportedMediaTypeError('json only'), 415, 'json only'],
    [new UnprocessableError('overdraft', 'over_balance'), 422, 'overdraft'],
    [new TokenMismatchError(), 428, "Token ID doesn't match"],
    [new TooManyRequestsError(), 429, 'Too Many Requests'],
    [new ServiceUnavailableError(), 503, 'Service Unavailable'],
    [new StoreTimeoutError(), 504, 'Gateway Timeout'],
  ])('maps %p to %i', (error, status, message) => {
    const response = toErrorResponse(error);
    expect(response.status).toBe(status);
    expect(response.body.success).toBe('false');
    expect(response.body.errors.code).toBe(String(status));
    expect(response.body.errors.message).toBe(message);
    expect(response.unexpected).toBe(false);
  });

  it('adds details only for validation errors that have them', () => {
    expect(toErrorResponse(new ValidationError('x', [{ field: 'a', message: 'b' }])).body.errors.details).toEqual([
      { field: 'a', message: 'b' },
    ]);
    expect(toErrorResponse(new ValidationError('x')).body.errors).not.toHaveProperty('details');
  });

  it('lists the first 30 problems, their number, and cuts a field name to 64 characters and a message to 400', () => {
    const longField = `${'f'.repeat(100)}😀`;
    const problems = [
      { field: longField, message: `is "${'v'.repeat(1000)}"` },
      ...Array.from({ length: 31 }, (_, i) => ({ field: `field_${i}`, message: 'is required' })),
    ];
    expect(toErrorResponse(new ValidationError('x', problems)).body).toEqual({
      success: 'false',
      errors: {
        code: '400',
        message: 'x',
        details: [
          { field: `${'f'.repeat(64)}…`, message: `is "${'v'.repeat(396)}…` },
          ...Array.from({ length: 29 }, (_, i) => ({ field: `field_${i}`, message: 'is required' })),
        ],
        details_total: 32,
      },
    });
  });

  it('never splits a character of a cut field name', () => {
    const details = toErrorResponse(new ValidationError('x', [{ field: `${'f'.repeat(63)}😀😀`, message: 'm' }])).body.errors.details;
    expect(details).toEqual([{ field: `${'f'.repeat(63)}😀…`, message: 'm' }]);
  });

  it("gives the error's own reason, else its class's", () => {
    expect(toErrorResponse(new ConflictError('x', 'token_not_active')).reason).toBe('token_not_active');
    expect(toErrorResponse(new TokenMismatchError()).reason).toBe('token_mismatch');
  });

  it('maps a malformed percent-escape in the path to a 400', () => {
    expect(toErrorResponse(new URIError('URI malformed')).body).toEqual({
      success: 'false',
      errors: { code: '400', message: 'Malformed percent-encoding in the path' },
    });
  });

  it('sets Allow for a 405', () => {
    expect(toErrorResponse(new MethodNotAllowedError(['GET', 'POST'])).headers).toEqual({ Allow: 'GET, POST' });
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'boom'],
    ['a number', 42],
    ['a function', () => 1],
    ['a plain Error', new Error('secret detail')],
    ['an error that looks like an HTTP error', Object.assign(new Error('x'), { type: 'entity.too.large', status: 413 })],
    ['an object with type __proto__', { type: '__proto__' }],
  ])('masks %s as a 500 with the fixed message', (_what, thrown) => {
    expect(toErrorResponse(thrown)).toEqual({
      status: 500,
      reason: 'internal',
      headers: {},
      body: { success: 'false', errors: { code: '500', message: 'internal Server Error' } },
      unexpected: true,
    });
  });
});
