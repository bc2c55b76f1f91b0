import Basics
import Testing

@Suite struct URLRedactionTests {
    @Test(arguments: [
        ("https://user:secret@api.example.com/items?page=2", "https://api.example.com/items?page=2"),
        ("https://token@api.example.com", "https://api.example.com"),
        ("http://a@b:c@host:8080/x", "http://host:8080/x"),
        ("//user:secret@host/path", "//host/path"),
        // A proxy written without a scheme.
        ("user:secret@proxy.local:3128", "proxy.local:3128"),
        // `@` outside the authority is not a credential.
        ("https://api.example.com/people/a@b.com?by=c@d", "https://api.example.com/people/a@b.com?by=c@d"),
        ("/items?next=http://user:secret@elsewhere", "/items?next=http://user:secret@elsewhere"),
        ("https://api.example.com/items", "https://api.example.com/items"),
    ])
    func credentialsGoEverythingElseStays(url: String, shown: String) {
        #expect(URLRedaction.withoutCredentials(url) == shown)
    }
}
