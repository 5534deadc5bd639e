import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
  type PutEventsResultEntry,
} from '@aws-sdk/client-eventbridge';

/** PutEvents over the AWS SDK; per-entry failures come back in the result, whole-call failures throw. */
export function eventBridgePutEvents(client: EventBridgeClient) {
  return {
    async putEvents(entries: PutEventsRequestEntry[]): Promise<PutEventsResultEntry[]> {
      const out = await client.send(new PutEventsCommand({ Entries: entries }));
      return (
        out.Entries ?? entries.map(() => ({ ErrorCode: 'MissingResult', ErrorMessage: 'no result entry returned' }))
      );
    },
  };
}
