import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `allowCredential`: lets a value read from an environment variable or a file go to an
/// origin, from now on and for every later daemon (the allowances file). Clients call it only
/// after asking the person, naming both.
enum AllowCredentialRequest: AnsweredAtOnce {
    static let name = "allowCredential"
    static let section = "allowed-credentials-and-allowcredential"
    typealias Params = AllowCredentialParams
    typealias Result = AllowCredentialResult

    static func handle(_ daemon: Daemon, _ params: AllowCredentialParams) throws -> AllowCredentialResult {
        guard let allowances = daemon.options.credentialAllowances else {
            throw ResponseError.internalError("this daemon keeps no credential allowances")
        }
        do {
            try allowances.allow(params.entry)
        } catch {
            throw ResponseError.internalError("the allowance was not recorded: \(error.message)")
        }
        return AllowCredentialResult(entry: params.entry.resolved, path: allowances.path ?? "")
    }

    static let summary =
        "lets the value of an environment variable or a file go to an origin, for this daemon and every later one; clients call it only after asking the person"
    static let resultSchema: Schema = .object(
        [
            "env": .string,
            "file": .string.described("the path with ~ expanded and symbolic links resolved, as the allowances file holds it"),
            "origin": .string.described("as the allowances file holds it: without the scheme's default port"),
            "path": .string.described("the allowances file"),
        ],
        required: ["origin", "path"])
    static let errors: [ErrorComponent] = [.invalidParams, .internalError]
}

struct AllowCredentialParams: DeclaredParams {
    let entry: CredentialAllowances.Entry

    static let declaration = ObjectDeclaration(
        .optional(
            "env", Shape.string.documented(.string(minLength: 1, maxLength: 256)),
            doc: "the environment variable; exactly one of env and file"),
        .optional(
            "file", Shape.string.documented(.string(minLength: 1, maxLength: 4096)),
            doc: "the file (absolute, or from ~/): held with its symbolic links resolved; exactly one of env and file"),
        .required(
            "origin", Shape.nonEmptyString.documented(.string(minLength: 1, maxLength: 2048)),
            doc: "where the value may go: an http or https origin (https://api.github.com)"),
        as: AllowCredentialParams.init)

    init(environment: String?, file: String?, origin given: String) throws(FieldError) {
        let credential: CredentialAllowances.Entry.Credential
        switch (environment, file) {
        case (let name?, nil):
            guard ExternalValues.isVariableName(name) else {
                throw FieldError(
                    field: "env", expected: "an environment variable's name (1 to 256 bytes, no \"=\" or NUL)", got: JSON(name))
            }
            credential = .environment(name)
        case (nil, let given?):
            switch ExternalValues.expandedPath(given) {
            case .success(let path): credential = .file(path)
            case .failure(let problem):
                throw FieldError(
                    field: "file", expected: "an absolute path, or one from ~/", got: JSON(given),
                    message: "\"file\" \(problem.message)")
            }
        case (.some, .some):
            throw FieldError(field: "file", expected: "nothing: give env or file, not both", got: JSON("string"))
        case (nil, nil):
            throw FieldError(field: "env", expected: "a string: the variable (or \"file\": the file) to allow", got: JSON("nothing"))
        }
        guard let origin = CredentialAllowances.origin(given) else {
            throw FieldError(
                field: "origin",
                expected: "an origin: http or https, a host and an optional port in 1...65535, no path (https://api.example.com)",
                got: JSON(URLResolution.redacted(given)))
        }
        entry = CredentialAllowances.Entry(credential: credential, origin: origin)
    }
}

struct AllowCredentialResult: WireEncodable {
    let entry: CredentialAllowances.Entry
    let path: String

    var json: JSON {
        switch entry.credential {
        case .environment(let name): ["env": JSON(name), "origin": JSON(entry.origin), "path": JSON(path)]
        case .file(let file): ["file": JSON(file), "origin": JSON(entry.origin), "path": JSON(path)]
        }
    }
}
