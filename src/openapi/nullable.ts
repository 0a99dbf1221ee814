/** A node of a JSON document, as the walker sees it. */
type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Rewrites OpenAPI 3.0's `nullable: true` (which @nestjs/swagger writes) in the 3.1 forms that
 * JSON Schema validators read as "or null": `type: [T, 'null']` (with `null` in an `enum`), and
 * `anyOf: [{$ref}, {type: 'null'}]` for a referenced object, which 3.0's `nullable` beside an
 * `allOf` `$ref` does not express (validators then demand the object even for `null`).
 */
export function nullableTo31(document: unknown): void {
  const stack: unknown[] = [document];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    if (!isNode(node)) continue;
    if (typeof node.nullable === 'boolean') rewrite(node);
    stack.push(...Object.values(node));
  }
}

function rewrite(schema: Node): void {
  const nullable = schema.nullable === true;
  delete schema.nullable;
  if (!nullable) return;
  const ref = referenceOf(schema);
  if (ref !== undefined) {
    delete schema.$ref;
    delete schema.allOf;
    delete schema.type;
    schema.anyOf = [{ $ref: ref }, { type: 'null' }];
    return;
  }
  if (typeof schema.type === 'string') {
    schema.type = [schema.type, 'null'];
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
    return;
  }
  if (Array.isArray(schema.anyOf) || Array.isArray(schema.oneOf)) {
    const key = Array.isArray(schema.anyOf) ? 'anyOf' : 'oneOf';
    schema[key] = [...(schema[key] as unknown[]), { type: 'null' }];
    return;
  }
  throw new Error(`cannot express nullable for schema ${JSON.stringify(schema)}`);
}

/** The `$ref` of a schema that is only a reference (directly or as a lone `allOf`). */
function referenceOf(schema: Node): string | undefined {
  if (typeof schema.$ref === 'string') return schema.$ref;
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && isNode(allOf[0])) {
    const ref = allOf[0].$ref;
    if (typeof ref === 'string') return ref;
  }
  return undefined;
}
