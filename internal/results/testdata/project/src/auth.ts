import { schema } from "./schema";
import { UserService } from "./services/user";
import { ValidationError } from "./errors";

export interface LoginInput {
  userId: string;
  amount: number;
}

// processLogin validates input, loads the user and builds the payload.
export async function processLogin(input: LoginInput) {
  const result = schema.validate(input);
  if (!result.success) throw new ValidationError();

  const user = await UserService.find(input.userId);
  if (!user) {
    return null;
  }

  const payload = {
    owner_id: user.id,
    amount: input.amount
  };
  return payload;
}
