/**
 * The S3 Tables maintenance API as a stub that records the commands and keeps the configuration they set,
 * as the service does (moto does not implement Get/PutTableMaintenanceConfiguration).
 */
import {
  GetTableMaintenanceConfigurationCommand,
  type PutTableMaintenanceConfigurationCommand,
  type TableMaintenanceConfigurationValue,
} from '@aws-sdk/client-s3tables';
import type { S3TablesMaintenanceClient } from '../../functions/core/catalog/s3tables-maintenance.js';

export const STUB_BUCKET_ARN = 'arn:aws:s3tables:us-east-1:123456789012:bucket/lake';

export class StubS3Tables implements S3TablesMaintenanceClient {
  readonly calls: { command: string; input: Record<string, unknown> }[] = [];
  readonly configuration: Record<string, TableMaintenanceConfigurationValue> = {};
  failWith?: Error & { $metadata?: { httpStatusCode: number } };

  async send(
    command: GetTableMaintenanceConfigurationCommand | PutTableMaintenanceConfigurationCommand,
  ): Promise<unknown> {
    if (this.failWith) throw this.failWith;
    const input = command.input as unknown as Record<string, unknown>;
    this.calls.push({ command: command.constructor.name, input });
    if (command instanceof GetTableMaintenanceConfigurationCommand) {
      return { tableARN: `${STUB_BUCKET_ARN}/table/1`, configuration: structuredClone(this.configuration) };
    }
    this.configuration[String(input.type)] = structuredClone(
      input.value as TableMaintenanceConfigurationValue,
    );
    return {};
  }
}

/** What the SDK throws for moto's HTML 404 page (an operation moto does not implement). */
export function unimplementedRoute(): Error & { $metadata: { httpStatusCode: number } } {
  const error = new SyntaxError(
    `Unexpected token '<', "<!doctype "... is not valid JSON\n  Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object.`,
  );
  return Object.assign(error, { $metadata: { httpStatusCode: 404 } });
}
