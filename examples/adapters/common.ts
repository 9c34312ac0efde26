// What every adapter starts from: our login result, user information and menu tree. Self-contained
// (no import from this repository): copy it into the template beside the adapter. The shapes are
// those of src/client.ts (what hc<AppType> gives an SPA), and test/adapters.test.ts fails to compile
// when the API's own types stop fitting them.

/** A directory or menu of the route tree in getLoginUserInformation (buttons are not routes). */
export interface MenuNode {
  id: number;
  parentId: number;
  title: string;
  type: 'directory' | 'menu';
  path: string | null;
  /** The view to load (our example SPA's `user/UserList`; a menu preset sets the template's). */
  component: string | null;
  icon: string | null;
  /** Order among siblings (route meta `order`). */
  sort: number;
  /** Routed but not shown in the menu. */
  hidden: boolean;
  /** Stable, unique route name. */
  name: string;
  keepAlive: boolean;
  children: MenuNode[];
}

/** The data of GET /app/sysLoginUser/getLoginUserInformation (the fields the adapters read). */
export interface LoginUserInformation {
  user: { id: number; loginName: string; nickName: string; email: string | null; phone: string | null; avatar: string | null };
  /** Codes of the enabled roles (`superAdmin` for the super admin). */
  roles: string[];
  /** Permission codes; `['*']` for a super admin. */
  permissions: string[];
  menus: MenuNode[];
}

/** The data of POST /auth/login. */
export interface LoginData {
  token: string;
  tokenType: 'Bearer';
  expiresIn: number;
  expiresAt: string;
}

/** Our envelope around any `data`. */
export interface Envelope<T> {
  status: number;
  msg: string;
  data: T;
  traceId: string;
}

// --- login with a second factor (docs/second-factor.md) -------------------------------------------

/** The data of POST /auth/login for an account with a second factor: no session yet, a challenge. */
export interface LoginChallenge {
  mfa: true;
  /** Single use, valid 5 minutes; a wrong code does not end it. */
  challenge: string;
  methods: ('totp' | 'passkey' | 'recovery')[];
  token: null;
}

/** One factor for POST /auth/login/verify: a code of the authenticator app, a recovery code, or a passkey assertion. */
export type SecondFactor = { code: string } | { recoveryCode: string } | { passkey: unknown };

/** The data of POST /auth/login/verify: a login result, and how many recovery codes are left after one was used. */
export interface VerifiedLogin extends LoginData {
  factor: 'totp' | 'passkey' | 'recovery';
  recoveryCodesLeft: number | null;
}

/** The template's request function: POSTs JSON, resolves with the envelope's `data`, throws on an error envelope. */
export type PostData = <T>(path: string, body: unknown) => Promise<T>;

/**
 * The login recipe for every template: POST /auth/login; when it answers a challenge, `askFactor`
 * shows the second step (a code field, "use a recovery code", "use a passkey" when `methods` has
 * it) and resolves with the factor; POST /auth/login/verify. Either way the result is LoginData,
 * so ruoyiLogin / soybeanLogin stay as they are.
 */
export async function loginWithSecondFactor(
  post: PostData,
  credentials: { loginName: string; password: string; codeKey?: string | null; securityCode?: string | null },
  askFactor: (challenge: LoginChallenge) => Promise<SecondFactor>,
): Promise<LoginData | VerifiedLogin> {
  const answer = await post<LoginData | LoginChallenge>('/auth/login', credentials);
  if (answer.token !== null) return answer;
  return post<VerifiedLogin>('/auth/login/verify', { challenge: answer.challenge, ...(await askFactor(answer)) });
}

/** In the browser: the "use a passkey" factor (navigator.credentials.get with the server's options). */
export async function passkeyFactor(post: PostData, challenge: string): Promise<SecondFactor> {
  const options = await post<PublicKeyCredentialRequestOptionsJSON>('/auth/login/passkeyOptions', { challenge });
  const credential = (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })) as PublicKeyCredential;
  return { passkey: credential.toJSON() };
}
