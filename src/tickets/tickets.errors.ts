/**
 * The data layer's NO_TICKETS condition: the ticket addressed by id does not exist or, when the
 * query is scoped to an owner, belongs to someone else. The two cases are deliberately the same.
 */
export class NoTicketsCondition extends Error {
  constructor(readonly ticketId: string) {
    super(`NO_TICKETS: ${ticketId}`);
    this.name = 'NoTicketsCondition';
  }
}
