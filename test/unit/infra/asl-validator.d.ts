/** asl-validator 4 ships no type declarations; this is the part the tests use. */
declare module 'asl-validator' {
  interface AslValidationResult {
    isValid: boolean;
    errors: { message?: string }[];
    errorsText(separator?: string): string;
  }
  function aslValidator(
    definition: unknown,
    options?: { checkPaths?: boolean; checkArn?: boolean },
  ): AslValidationResult;
  export default aslValidator;
}
