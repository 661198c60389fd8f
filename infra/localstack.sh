#!/usr/bin/env bash
# What a free LocalStack can run of floe (untested here: this machine has no Docker). See infra/README.md.
#
#   docker run -d --name localstack -p 4566:4566 -e LOCALSTACK_AUTH_TOKEN \
#     -v /var/run/docker.sock:/var/run/docker.sock localstack/localstack
#   infra/localstack.sh            # = cli, then maintenance
#   infra/localstack.sh cli        # floe ingest / scan / inspect / maintain against LocalStack's S3 Tables + DynamoDB
#   infra/localstack.sh maintenance  # the synthesized maintenance state machine on LocalStack's Step Functions + Lambda
#
# Not here: the whole stack (`cdk deploy`). Its Kafka event source mappings and MSK are paid LocalStack
# features, so CloudFormation cannot create the ingest side; the ingest handler runs through the CLI
# instead, on the same S3 Tables bucket and lock table.
#
# The `cli` commands are the ones run against moto: point FLOE_ENDPOINT at a moto_server
# (`FLOE_ENDPOINT=http://127.0.0.1:5000 infra/localstack.sh cli`) and nothing else changes.
# Ambient credentials and profiles are dropped first, so this can never touch a real account.
set -euo pipefail
cd "$(dirname "$0")/.."

endpoint="${FLOE_ENDPOINT:-${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}}"
if ! curl -sS -o /dev/null "${endpoint}"; then
  echo "nothing answers at ${endpoint}; start LocalStack first (see the top of this script)" >&2
  exit 1
fi

unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN
export AWS_ENDPOINT_URL="${endpoint}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export AWS_REGION="${AWS_REGION:-us-east-1}"
export AWS_DEFAULT_REGION="${AWS_REGION}"
export AWS_PAGER=""
export CDK_DISABLE_CLI_TELEMETRY=true
account=000000000000
bucket_name="${FLOE_TABLE_BUCKET_NAME:-floe-local}"
lock_table="${FLOE_LOCK_TABLE:-floe-local-locks}"
table=sales.orders
floe() { npx tsx functions/cli/main.ts "$@"; }

# The table bucket (created once; its ARN is what every floe command and function is given).
table_bucket_arn() {
  local arn
  arn=$(aws s3tables list-table-buckets --query "tableBuckets[?name=='${bucket_name}'].arn | [0]" --output text)
  if [ -z "${arn}" ] || [ "${arn}" = "None" ]; then
    arn=$(aws s3tables create-table-bucket --name "${bucket_name}" --query arn --output text)
  fi
  echo "${arn}"
}

run_cli() {
  local arn catalog
  arn=$(table_bucket_arn)
  catalog=(--catalog s3tables --table-bucket-arn "${arn}" --lock-table "${lock_table}")
  echo "== ingest two batches into ${table} (bucket ${arn}, lock table ${lock_table})"
  floe ingest events/orders-batch-1.json events/orders-batch-2.json "${catalog[@]}" \
    --table "${table}" --schema events/orders.schema.json --partition-by 'day(order_ts)'
  echo "== ingest the first batch again: a replay, skipped by its offsets"
  floe ingest events/orders-batch-1.json "${catalog[@]}" \
    --table "${table}" --schema events/orders.schema.json --partition-by 'day(order_ts)'
  echo "== scan, inspect, maintain"
  floe scan "${catalog[@]}" --table "${table}" --limit 5
  floe inspect "${catalog[@]}" --table "${table}"
  floe maintain all "${catalog[@]}" --table "${table}"
}

run_maintenance() {
  local arn out plan role machine execution status
  arn=$(table_bucket_arn)
  out=cdk.out/localstack
  echo "== synthesize the example app (cdk-nag included) into ${out}"
  npx cdk synth --quiet --no-notices --output "${out}" >/dev/null
  plan="${out}/localstack-maintenance.json"
  npx tsx infra/localstack-maintenance.ts "${out}" "${AWS_REGION}" "${account}" "${arn}" "${lock_table}" >"${plan}"

  # LocalStack does not enforce IAM by default; a role must still exist for create-function.
  role="arn:aws:iam::${account}:role/floe-local-maintenance"
  aws iam get-role --role-name floe-local-maintenance >/dev/null 2>&1 ||
    aws iam create-role --role-name floe-local-maintenance >/dev/null --assume-role-policy-document \
      '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["lambda.amazonaws.com","states.amazonaws.com"]},"Action":"sts:AssumeRole"}]}'

  echo "== create the six maintenance functions from the synthesized bundles"
  local count i name handler asset env zip
  count=$(node -e 'console.log(require(process.argv[1]).functions.length)' "$(pwd)/${plan}")
  for ((i = 0; i < count; i++)); do
    read -r name handler asset < <(node -e '
      const f = require(process.argv[1]).functions[Number(process.argv[2])];
      console.log(f.name, f.handler, f.assetDir);' "$(pwd)/${plan}" "${i}")
    env=$(node -e '
      const f = require(process.argv[1]).functions[Number(process.argv[2])];
      console.log(JSON.stringify({ Variables: f.environment }));' "$(pwd)/${plan}" "${i}")
    zip="${out}/${name}.zip"
    rm -f "${zip}"
    (cd "${asset}" && python3 -m zipfile -c "${OLDPWD}/${zip}" ./*)
    aws lambda delete-function --function-name "${name}" >/dev/null 2>&1 || true
    aws lambda create-function --function-name "${name}" --runtime nodejs22.x --architectures arm64 \
      --handler "${handler}" --role "${role}" --timeout 900 --memory-size 3008 \
      --zip-file "fileb://${zip}" --environment "${env}" >/dev/null
    aws lambda wait function-active-v2 --function-name "${name}"
    echo "   ${name} (${handler})"
  done

  echo "== create the state machine and run one maintenance execution for ${table}"
  machine=$(aws stepfunctions list-state-machines \
    --query "stateMachines[?name=='floe-local-maintenance'].stateMachineArn | [0]" --output text)
  if [ -n "${machine}" ] && [ "${machine}" != "None" ]; then
    aws stepfunctions delete-state-machine --state-machine-arn "${machine}"
  fi
  machine=$(aws stepfunctions create-state-machine --name floe-local-maintenance --role-arn "${role}" \
    --definition "$(node -e 'console.log(require(process.argv[1]).definition)' "$(pwd)/${plan}")" \
    --query stateMachineArn --output text)
  execution=$(aws stepfunctions start-execution --state-machine-arn "${machine}" \
    --input "{\"table\":\"${table}\",\"maxSnapshotAgeMs\":432000000,\"minSnapshotsToKeep\":1,\"orphanFileAgeMs\":259200000}" \
    --query executionArn --output text)
  status=RUNNING
  for _ in $(seq 1 120); do
    status=$(aws stepfunctions describe-execution --execution-arn "${execution}" --query status --output text)
    [ "${status}" = "RUNNING" ] || break
    sleep 5
  done
  aws stepfunctions describe-execution --execution-arn "${execution}" --query '{status: status, output: output, error: error, cause: cause}'
  [ "${status}" = "SUCCEEDED" ]
}

case "${1:-all}" in
  cli) run_cli ;;
  maintenance) run_maintenance ;;
  all)
    run_cli
    run_maintenance
    ;;
  *)
    echo "usage: $0 [all|cli|maintenance]" >&2
    exit 2
    ;;
esac
