/** Protobuf schemas for format tests, and a producer that encodes with protobufjs itself. */
import protobuf from 'protobufjs';

export const MONEY_PROTO = `syntax = "proto3";
package acme.common;
message Money { string currency = 1; int64 units = 2; }
`;

export const ORDER_PROTO = `syntax = "proto3";
package acme.orders;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "confluent/type/decimal.proto";
import "acme/common/money.proto";

message Other { string x = 1; }

message Order {
  enum Status { NEW = 0; PAID = 1; }
  message Line {
    message Tag { string t = 1; }
    string sku = 1;
    int32 qty = 2;
    repeated Tag tags = 3;
  }
  int64 id = 1;
  uint64 big = 2;
  sint64 neg = 3;
  fixed64 f64 = 4;
  sfixed64 sf64 = 5;
  int32 qty = 6;
  uint32 u32 = 7;
  bool paid = 8;
  string name = 9;
  bytes blob = 10;
  float score = 11;
  double weight = 12;
  Status status = 13;
  repeated Line lines = 14;
  map<string, int64> attrs = 15;
  map<int64, string> by_id = 16;
  map<bool, int32> flags = 17;
  optional string note = 18;
  oneof payment {
    string card = 19;
    int64 account = 20;
  }
  google.protobuf.Timestamp created = 21;
  google.protobuf.Int64Value maybe = 22;
  google.protobuf.StringValue missing_wrapper = 23;
  google.protobuf.Struct extra = 24;
  confluent.type.Decimal amount = 25;
  acme.common.Money price = 26;
  Line first = 27;
  repeated int64 ids = 28;
  Order parent = 29;
  double ratio = 30;
}
`;

const CONFLUENT_DECIMAL = `syntax = "proto3"; package confluent.type;
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }`;

/** A producer's root with the schema and everything it imports. */
export function producerRoot(...sources: string[]): protobuf.Root {
  const root = new protobuf.Root();
  for (const name of ['timestamp', 'wrappers', 'struct', 'duration']) {
    root.addJSON(protobuf.common.get(`google/protobuf/${name}.proto`)?.nested ?? {});
  }
  protobuf.parse(CONFLUENT_DECIMAL, root, { keepCase: true });
  for (const source of sources) protobuf.parse(source, root, { keepCase: true });
  root.resolveAll();
  return root;
}

export function encode(root: protobuf.Root, typeName: string, value: Record<string, unknown>): Uint8Array {
  const type = root.lookupType(typeName);
  const message = type.fromObject(value);
  const problem = type.verify(message);
  if (problem) throw new Error(`test message does not verify: ${problem}`);
  return type.encode(message).finish();
}
