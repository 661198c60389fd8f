#!/usr/bin/env bash
# The local loop against LocalStack (needs Docker): deploy, inspect, destroy the example stack.
#
#   docker run -d --name localstack -p 4566:4566 localstack/localstack   # (or your LocalStack setup)
#   FLOE_MSK_CLUSTER_ARN=<arn from `aws kafka create-cluster ...`> infra/localstack.sh deploy
#   infra/localstack.sh destroy
#
# The AWS CDK CLI (>= 2.177) sends every call to AWS_ENDPOINT_URL, so the plain CLI is used, not cdklocal.
# Ambient credentials and profiles are dropped first so that this can never deploy to a real account.
# Whether MSK, Kafka event source mappings, Scheduler and S3 Tables are emulated depends on your LocalStack
# edition and version; resources it does not emulate fail the deployment with a clear CloudFormation error.
set -euo pipefail
cd "$(dirname "$0")/.."

endpoint="${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}"
if ! curl -fsS "${endpoint}/_localstack/health" >/dev/null; then
  echo "LocalStack is not reachable at ${endpoint}; start it first (docker run -d -p 4566:4566 localstack/localstack)" >&2
  exit 1
fi

unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN
export AWS_ENDPOINT_URL="${endpoint}"
# path-style S3 through LocalStack's wildcard DNS name, which the CLI's asset uploads need
export AWS_ENDPOINT_URL_S3="${endpoint/localhost.localstack.cloud/s3.localhost.localstack.cloud}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export AWS_REGION="${AWS_REGION:-us-east-1}" AWS_DEFAULT_REGION="${AWS_REGION:-us-east-1}"
export CDK_DISABLE_CLI_TELEMETRY=true
account=000000000000

case "${1:-deploy}" in
  deploy)
    npx cdk bootstrap "aws://${account}/${AWS_REGION}" --no-notices
    npx cdk deploy FloeExample --require-approval never --no-notices "${@:2}"
    ;;
  maintenance)
    # start one maintenance execution for the example table and print its ARN
    machine=$(aws stepfunctions list-state-machines --query "stateMachines[?contains(name, 'Maintenance')].stateMachineArn | [0]" --output text)
    input='{"table":"sales.orders","maxSnapshotAgeMs":432000000,"minSnapshotsToKeep":1,"orphanFileAgeMs":259200000}'
    aws stepfunctions start-execution --state-machine-arn "${machine}" --input "${input}" --query executionArn --output text
    ;;
  destroy)
    npx cdk destroy FloeExample --force --no-notices
    ;;
  *)
    echo "usage: $0 [deploy|maintenance|destroy] [cdk options]" >&2
    exit 2
    ;;
esac
