/** The feed's query (contract section 13.2): GET /v1/accounts/{source_id}/changes, and GET /admin/changes beside source_id. */
import { z } from 'zod';
import { CHANGE_TYPES, type ChangeType } from '../domain/changes';
import { text } from './fields';

/** The longest a feed request waits for a change (contract section 13.2). */
const MAX_WAIT_SECONDS = 30;
const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;

/** A query parameter given once; Express's query parser makes an array of a repeated one. */
function parameter(expected: string) {
  return z.string({ error: (issue) => (Array.isArray(issue.input) ? 'must be given once' : `must be ${expected}`) });
}

/** A whole number as a query writes it: digits, no sign, no leading zero, within what `pattern` allows. */
function wholeNumber(expected: string, pattern: RegExp) {
  return parameter(expected).regex(pattern, `must be ${expected}`).transform(Number);
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(CHANGE_TYPES);

/** A comma-separated list of change types; each unknown one is named, with the known ones. */
const changeTypes = parameter('a comma-separated list of change types')
  .transform((value, context) => {
    const listed = value.split(',');
    const unknown = listed.filter((type) => !KNOWN_TYPES.has(type));
    if (unknown.length > 0) {
      context.issues.push({
        code: 'custom',
        input: value,
        message: `${unknown.map((type) => JSON.stringify(type)).join(', ')} ${unknown.length === 1 ? 'is not a change type' : 'are not change types'}: the types are ${CHANGE_TYPES.join(', ')}`,
      });
      return z.NEVER;
    }
    return [...new Set(listed)] as ChangeType[];
  })
  .meta({
    description: `Only these types of change, separated by commas (token.withdrawn,token.refunded): ${CHANGE_TYPES.join(', ')}. Unset: every type.`,
  });

const FEED_PARAMETERS = {
  // At most 15 digits: a safe integer, and more changes than an account makes.
  after: wholeNumber('a whole number, 0 or more', /^(0|[1-9]\d{0,14})$/)
    .default(0)
    .meta({ description: 'The seq of the last change already read: the page holds the changes after it. Default 0: from the first kept.' }),
  limit: wholeNumber(`a whole number from 1 to ${MAX_PAGE}`, /^([1-9]\d{0,2}|1000)$/)
    .default(DEFAULT_PAGE)
    .meta({ description: `The most changes in the page, 1 to ${MAX_PAGE}. Default ${DEFAULT_PAGE}.` }),
  types: changeTypes.optional(),
  wait: wholeNumber(`a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`, /^([12]?\d|30)$/)
    .default(0)
    .meta({
      description: `When no matching change follows after: how many seconds, 0 to ${MAX_WAIT_SECONDS}, to wait for one before answering an empty page. Default 0: answer at once.`,
    }),
};

/** A parameter the route does not take is refused, naming it: a misspelt `after` would otherwise read the feed from its start. */
function onlyThese<Shape extends z.ZodRawShape>(shape: Shape) {
  const unknown = `is not a parameter of this route; it takes ${Object.keys(shape).join(', ')}`;
  return z.strictObject(shape, { error: (issue) => (issue.code === 'unrecognized_keys' ? unknown : undefined) });
}

/** GET /v1/accounts/{source_id}/changes: the account is the path's. */
export const feedQuerySchema = onlyThese(FEED_PARAMETERS);
export const feedPathSchema = z.object({ source_id: text() });

/** GET /admin/changes: any account's feed, named by source_id. */
export const adminFeedQuerySchema = onlyThese({ source_id: text(), ...FEED_PARAMETERS });

export type FeedQuery = z.output<typeof feedQuerySchema>;

/** The query as a URL writes it, for an example. */
export type FeedQueryText = z.input<typeof feedQuerySchema>;
