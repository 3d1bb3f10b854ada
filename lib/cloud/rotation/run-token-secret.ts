/** Characters of the generated run-token secret: letters and digits only, about 380 bits. Shared by the stack and its rotation function, which must not load the CDK. */
export const RUN_TOKEN_SECRET_LENGTH = 64;
