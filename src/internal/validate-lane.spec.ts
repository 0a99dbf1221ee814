import { randomUUID } from 'node:crypto';
import { createValidationPipe } from '../common/validation';
import { MAX_TOKEN_LENGTH, ValidateTokenRequest } from './dto/internal.dto';
import { plainRequest } from './validate-lane';

/** What the route's validation pipe makes of `body`: the fields it passes on, or null. */
async function byPipe(body: unknown): Promise<{ token: unknown; node_id: unknown } | null> {
  try {
    const input = (await createValidationPipe().transform(body, {
      type: 'body',
      metatype: ValidateTokenRequest,
    })) as ValidateTokenRequest;
    return { token: input.token, node_id: input.node_id };
  } catch {
    return null;
  }
}

describe("the validate lane's reading of a body", () => {
  const node = randomUUID();
  const bodies: unknown[] = [
    { token: 'abc', node_id: node },
    { node_id: node, token: 'abc' },
    { token: '', node_id: node.toUpperCase() },
    { token: 'x'.repeat(MAX_TOKEN_LENGTH), node_id: node },
    { token: 'x'.repeat(MAX_TOKEN_LENGTH + 1), node_id: node },
    { token: 'a\u0000b', node_id: node },
    { token: 'abc', node_id: `${node}0` },
    { token: 'abc', node_id: node.replaceAll('-', '') },
    { token: 'abc', node_id: '00000000-0000-0000-0000-000000000000' },
    { token: 'abc', node_id: `{${node}}` },
    { token: 'abc' },
    { node_id: node },
    { token: 'abc', node_id: node, extra: 1 },
    { token: 'abc', node_id: node, node: undefined },
    JSON.parse(`{"token":"abc","node_id":"${node}","__proto__":{}}`),
    { token: 1, node_id: node },
    { token: ['abc'], node_id: node },
    { token: 'abc', node_id: 5 },
    { token: null, node_id: node },
    [],
    ['abc', node],
    'abc',
    5,
    null,
    {},
  ];

  it('takes a body only as the route would, with the same fields, and takes what nodes send', async () => {
    for (const body of bodies) {
      const lane = plainRequest(body);
      // Never wider than the DTO: what the lane takes, the pipe takes alike.
      if (lane !== null) {
        expect([body, await byPipe(body)]).toEqual([body, { ...lane }]);
      }
    }
    // What nodes send is taken: the lane is not merely refusing everything.
    expect(plainRequest({ token: 'abc', node_id: node })).toEqual({ token: 'abc', node_id: node });
    expect(plainRequest({ node_id: node, token: '' })).toEqual({ token: '', node_id: node });
    const taken = bodies.filter((body) => plainRequest(body) !== null);
    expect(taken).toHaveLength(5);
  });
});
