import { nullableTo31 } from './nullable';

describe('nullableTo31', () => {
  it('writes each 3.0 nullable in the 3.1 form validators read as "or null"', () => {
    const document = {
      components: {
        schemas: {
          User: {
            properties: {
              subscription: {
                type: 'object',
                nullable: true,
                allOf: [{ $ref: '#/components/schemas/Subscription' }],
                description: 'null without one',
              },
              role: { type: 'string', enum: ['owner', 'support'], nullable: true },
              tg_id: { type: 'number', nullable: true },
              traffic: { $ref: '#/components/schemas/Traffic', nullable: false },
              nullable: { type: 'boolean' },
            },
          },
        },
      },
    };
    nullableTo31(document);
    expect(document.components.schemas.User.properties).toEqual({
      subscription: {
        anyOf: [{ $ref: '#/components/schemas/Subscription' }, { type: 'null' }],
        description: 'null without one',
      },
      role: { type: ['string', 'null'], enum: ['owner', 'support', null] },
      tg_id: { type: ['number', 'null'] },
      traffic: { $ref: '#/components/schemas/Traffic' },
      nullable: { type: 'boolean' },
    });
  });

  it('refuses a nullable it cannot express rather than dropping it', () => {
    expect(() => nullableTo31({ schema: { nullable: true, description: 'what?' } })).toThrow(
      /cannot express nullable/,
    );
  });
});
