//! Where an agent or a Prometheus server answers, and how strata reaches
//! it, as Prometheus's own scrape configuration does: the URL (`http://` or
//! `https://`, IPv6 in brackets), HTTP Basic credentials (in the URL, or
//! `USER:PASSWORD` from a file or the environment, so that a password need
//! never be on a command line), and TLS with the system's certificate
//! authorities, a CA file, or no verification where that is asked for by
//! name. An endpoint shown (Display, Debug) never holds the password.
//!
//! Not for: what is asked of it (`scrape`, `query`) or serving.

use anyhow::{bail, Context};
use base64::Engine as _;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

/// The environment variable that may hold an agent's `USER:PASSWORD`.
pub const AGENT_BASIC_AUTH_ENV: &str = "STRATA_AGENT_BASIC_AUTH";
/// The environment variable that may hold a Prometheus server's
/// `USER:PASSWORD`.
pub const PROMETHEUS_BASIC_AUTH_ENV: &str = "STRATA_PROMETHEUS_BASIC_AUTH";

/// How strata reaches the agents of a command (`--agent`): the options of
/// `run` and `observe`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct AgentAccess {
    /// A file holding USER:PASSWORD, sent as HTTP Basic auth to every
    /// --agent whose URL carries no password (node_exporter's
    /// web-config.yml basic_auth_users) [default: $STRATA_AGENT_BASIC_AUTH]
    #[arg(long, value_name = "FILE")]
    pub agent_basic_auth_file: Option<PathBuf>,
    /// Certificate authorities (PEM) that sign the https:// agents'
    /// certificates, trusted beside the system's
    #[arg(long, value_name = "FILE")]
    pub agent_ca_file: Option<PathBuf>,
    /// Do not verify the certificates of https:// agents (said in every
    /// output that names the agent)
    #[arg(long)]
    pub agent_insecure: bool,
}

impl AgentAccess {
    /// As [`Access`], with the option names `--agent-…`.
    pub fn access(&self) -> Access {
        Access {
            option: "--agent",
            basic_auth_file: self.agent_basic_auth_file.clone(),
            basic_auth_env: AGENT_BASIC_AUTH_ENV,
            ca_file: self.agent_ca_file.clone(),
            insecure: self.agent_insecure,
        }
    }

    /// [`Access::apply`] to the agents.
    pub fn apply(&self, endpoints: &mut [Endpoint]) -> anyhow::Result<()> {
        self.access().apply(endpoints)
    }
}

/// Credentials and trust for the endpoints of one option.
#[derive(Clone, Debug)]
pub struct Access {
    /// `--agent`, `--prometheus`: the option the endpoints came from.
    pub option: &'static str,
    pub basic_auth_file: Option<PathBuf>,
    pub basic_auth_env: &'static str,
    pub ca_file: Option<PathBuf>,
    pub insecure: bool,
}

impl Access {
    /// `endpoints` with this access's credentials and TLS; any of them
    /// wrong is an error naming its option, before any work.
    pub fn apply(&self, endpoints: &mut [Endpoint]) -> anyhow::Result<()> {
        self.check_used(endpoints)?;
        if endpoints.is_empty() {
            return Ok(());
        }
        let given = self.basic_auth()?;
        let tls = match endpoints.iter().any(|endpoint| endpoint.tls.is_some()) {
            true => Some(self.tls()?),
            false => None,
        };
        for endpoint in endpoints.iter_mut() {
            endpoint.configure(self, given.as_ref(), tls.as_ref())?;
        }
        Ok(())
    }

    /// A CA file or `--…-insecure` without an https:// endpoint to use
    /// it is refused: it would be silently ignored.
    fn check_used(&self, endpoints: &[Endpoint]) -> anyhow::Result<()> {
        let https = endpoints.iter().any(|endpoint| endpoint.tls.is_some());
        if !https && (self.ca_file.is_some() || self.insecure) {
            bail!(
                "{option}-ca-file and {option}-insecure apply to https:// URLs: give {option} \
                 https://HOST:PORT",
                option = self.option
            );
        }
        Ok(())
    }

    /// `USER:PASSWORD` from the file, else the environment; `None` when
    /// neither is given.
    fn basic_auth(&self) -> anyhow::Result<Option<Credentials>> {
        let option = self.option;
        if let Some(path) = &self.basic_auth_file {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!(
                    "{option}-basic-auth-file {}: cannot read it",
                    path.display()
                )
            })?;
            let credentials = Credentials::of_pair(text.trim_end_matches(['\n', '\r']))
                .with_context(|| format!("{option}-basic-auth-file {}", path.display()))?;
            return Ok(Some(credentials));
        }
        match std::env::var(self.basic_auth_env) {
            Ok(text) if !text.is_empty() => Credentials::of_pair(&text)
                .map(Some)
                .with_context(|| format!("${}", self.basic_auth_env)),
            _ => Ok(None),
        }
    }

    fn tls(&self) -> anyhow::Result<Tls> {
        if self.insecure {
            return Tls::unverified();
        }
        match &self.ca_file {
            None => Tls::system(),
            Some(path) => Tls::with_ca_file(path)
                .with_context(|| format!("{}-ca-file {}", self.option, path.display())),
        }
    }
}

/// HTTP Basic credentials. Debug shows the user only.
#[derive(Clone, PartialEq)]
struct Credentials {
    user: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:***", self.user)
    }
}

impl Credentials {
    /// `USER:PASSWORD` (the password may hold `:`).
    fn of_pair(text: &str) -> anyhow::Result<Credentials> {
        match text.split_once(':') {
            Some((user, password)) if !user.is_empty() => Ok(Credentials {
                user: user.to_string(),
                password: password.to_string(),
            }),
            _ => bail!("give USER:PASSWORD (one line)"),
        }
    }

    fn header(&self) -> String {
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// How an https:// endpoint's certificate is checked.
#[derive(Clone)]
struct Tls {
    config: Arc<rustls::ClientConfig>,
    verified: bool,
}

/// The system's certificate authorities, read once.
static SYSTEM_ROOTS: LazyLock<Arc<rustls::RootCertStore>> = LazyLock::new(|| {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    Arc::new(roots)
});

impl Tls {
    fn system() -> anyhow::Result<Tls> {
        Tls::trusting((**SYSTEM_ROOTS).clone())
    }

    fn with_ca_file(path: &std::path::Path) -> anyhow::Result<Tls> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::CertificateDer;
        let mut roots = (**SYSTEM_ROOTS).clone();
        let certificates: Vec<CertificateDer> = CertificateDer::pem_file_iter(path)
            .context("cannot read it as PEM certificates")?
            .collect::<Result<_, _>>()
            .context("cannot read it as PEM certificates")?;
        if certificates.is_empty() {
            bail!("it holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        for certificate in certificates {
            roots
                .add(certificate)
                .context("a certificate in it is not a CA certificate rustls can use")?;
        }
        Tls::trusting(roots)
    }

    fn trusting(roots: rustls::RootCertStore) -> anyhow::Result<Tls> {
        let config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .context("TLS")?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Tls {
            config: Arc::new(config),
            verified: true,
        })
    }

    fn unverified() -> anyhow::Result<Tls> {
        let provider = provider();
        let config = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .context("TLS")?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth();
        Ok(Tls {
            config: Arc::new(config),
            verified: false,
        })
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// `--…-insecure`: any certificate is taken; the handshake's signatures
/// are still checked, so the peer holds the key of the certificate it
/// shows.
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &rustls::pki_types::CertificateDer<'_>,
        signature: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &rustls::pki_types::CertificateDer<'_>,
        signature: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// An agent's or a Prometheus server's URL, its credentials and its TLS.
#[derive(Clone)]
pub struct Endpoint {
    /// `--agent`, `--prometheus`: the option it was given to.
    option: &'static str,
    /// The URL without its user information.
    uri: Uri,
    credentials: Option<Credentials>,
    /// `None` for http://.
    tls: Option<Tls>,
}

impl fmt::Display for Endpoint {
    /// The URL as given, its password (wherever it came from) `***`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(credentials) = &self.credentials else {
            return write!(formatter, "{}", self.uri);
        };
        let scheme = self.uri.scheme_str().unwrap_or("http");
        let authority = self
            .uri
            .authority()
            .map_or("", |authority| authority.as_str());
        let path = self.uri.path_and_query().map_or("", |path| path.as_str());
        write!(
            formatter,
            "{scheme}://{}:***@{authority}{path}",
            credentials.user
        )
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{self}")
    }
}

impl PartialEq for Endpoint {
    fn eq(&self, other: &Endpoint) -> bool {
        self.uri == other.uri && self.credentials == other.credentials
    }
}

impl Endpoint {
    /// `text` (`http[s]://[USER[:PASSWORD]@]HOST[:PORT][/PATH]`) given to
    /// `option`; a URL without a path gets `default_path`.
    pub fn parse(option: &'static str, text: &str, default_path: &str) -> anyhow::Result<Endpoint> {
        let masked = masked(text);
        let uri: Uri = text
            .parse()
            .map_err(|_| anyhow::anyhow!("{option} {masked}: not a URL (http://HOST:PORT)"))?;
        let tls = match uri.scheme_str() {
            Some("http") => None,
            Some("https") => Some(Tls::system()?),
            _ => bail!("{option} {masked}: give an http:// or https:// URL (http://HOST:PORT)"),
        };
        let Some(authority) = uri.authority().filter(|_| uri.host().is_some()) else {
            bail!("{option} {masked}: the URL names no host (http://HOST:PORT)");
        };
        let (userinfo, host_port) = match authority.as_str().rsplit_once('@') {
            Some((userinfo, host_port)) => (Some(userinfo), host_port),
            None => (None, authority.as_str()),
        };
        let credentials = match userinfo {
            None => None,
            Some(userinfo) => Some(
                Credentials::of_userinfo(userinfo)
                    .with_context(|| format!("{option} {masked}: the user before @ is missing"))?,
            ),
        };
        let path = match uri.path_and_query().map(|path| path.as_str()) {
            None | Some("") | Some("/") => default_path,
            Some(path) => path,
        };
        let scheme = uri.scheme_str().unwrap_or("http");
        let uri: Uri = format!("{scheme}://{host_port}{path}")
            .parse()
            .with_context(|| format!("{option} {masked}: not a URL"))?;
        Ok(Endpoint {
            option,
            uri,
            credentials,
            tls,
        })
    }

    /// The same server, asked `path_and_query` below this endpoint's path.
    pub fn below(&self, path_and_query: &str) -> anyhow::Result<Endpoint> {
        let base = self.uri.to_string();
        let uri = format!("{}{path_and_query}", base.trim_end_matches('/'))
            .parse()
            .context("the URL of the query")?;
        Ok(Endpoint {
            uri,
            ..self.clone()
        })
    }

    /// The same server, asked `path` in place of the last part of this
    /// endpoint's path (`/metrics`), so that an agent behind a proxy's
    /// prefix is asked below the same prefix.
    pub fn beside(&self, path: &str) -> anyhow::Result<Endpoint> {
        let own = self.uri.path();
        let prefix = own.rsplit_once('/').map_or("", |(prefix, _)| prefix);
        let mut parts = self.uri.clone().into_parts();
        parts.path_and_query = Some(
            format!("{prefix}{path}")
                .parse()
                .context("the path beside the agent's")?,
        );
        Ok(Endpoint {
            uri: Uri::from_parts(parts).context("the URL beside the agent's")?,
            ..self.clone()
        })
    }

    /// The credentials `given` by `access` (its file or environment) and
    /// its TLS, where the URL has none of its own: a password in the URL
    /// wins; a URL with a user and no password takes the password given
    /// when its user is the same.
    fn configure(
        &mut self,
        access: &Access,
        given: Option<&Credentials>,
        tls: Option<&Tls>,
    ) -> anyhow::Result<()> {
        if self.tls.is_some() {
            self.tls = tls.cloned();
        }
        self.credentials = match (self.credentials.take(), given.cloned()) {
            (Some(own), _) if !own.password.is_empty() => Some(own),
            (Some(own), Some(given)) if own.user == given.user => Some(given),
            (Some(own), Some(given)) => bail!(
                "{} {self}: the URL's user {} is not the user {} of {}",
                access.option,
                own.user,
                given.user,
                access
                    .basic_auth_file
                    .as_ref()
                    .map_or(format!("${}", access.basic_auth_env), |path| path
                        .display()
                        .to_string())
            ),
            (Some(own), None) => bail!(
                "{} {self}: the URL names the user {} and no password: give {}-basic-auth-file \
                 FILE (USER:PASSWORD) or ${}",
                access.option,
                own.user,
                access.option,
                access.basic_auth_env
            ),
            (None, given) => given,
        };
        Ok(())
    }

    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The host to connect to: a name, or an IP address (IPv6 without its
    /// brackets).
    pub fn host(&self) -> &str {
        let host = self.uri.host().unwrap_or_default();
        host.strip_prefix('[')
            .and_then(|host| host.strip_suffix(']'))
            .unwrap_or(host)
    }

    fn port(&self) -> u16 {
        self.uri.port_u16().unwrap_or(match self.tls {
            Some(_) => 443,
            None => 80,
        })
    }

    /// How it is reached, as a report says it: `http`, `https`, or
    /// `https, certificate not verified (--agent-insecure)`, and `, Basic
    /// auth as USER` when credentials are sent.
    pub fn transport(&self) -> String {
        let mut transport = match &self.tls {
            None => "http".to_string(),
            Some(tls) if tls.verified => "https".to_string(),
            Some(_) => format!("https, certificate not verified ({}-insecure)", self.option),
        };
        if let Some(credentials) = &self.credentials {
            transport += &format!(", Basic auth as {}", credentials.user);
        }
        transport
    }

    /// `GET` this endpoint over HTTP/1.1 (in TLS for https://); an answer
    /// that is not 2xx is an error that quotes the start of its body.
    pub(crate) async fn get(&self, most_bytes: usize) -> anyhow::Result<Answer> {
        let stream = tokio::net::TcpStream::connect((self.host(), self.port())).await?;
        stream.set_nodelay(true)?;
        match &self.tls {
            None => self.exchange(TokioIo::new(stream), most_bytes).await,
            Some(tls) => {
                let name = rustls::pki_types::ServerName::try_from(self.host().to_string())
                    .with_context(|| format!("{}: not a TLS server name", self.host()))?;
                let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
                let stream = connector.connect(name, stream).await.map_err(|error| {
                    anyhow::anyhow!(
                        "TLS: {error} (give {option}-ca-file with the certificate authority \
                         that signed its certificate, or {option}-insecure not to verify it)",
                        option = self.option
                    )
                })?;
                self.exchange(TokioIo::new(stream), most_bytes).await
            }
        }
    }

    async fn exchange<T>(&self, io: TokioIo<T>, most_bytes: usize) -> anyhow::Result<Answer>
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
        tokio::spawn(connection);
        let authority = self.uri.authority().context("no authority")?.as_str();
        let path = self.uri.path_and_query().map_or("/", |path| path.as_str());
        let mut request = Request::get(path).header(hyper::header::HOST, authority);
        if let Some(credentials) = &self.credentials {
            request = request.header(hyper::header::AUTHORIZATION, credentials.header());
        }
        let request = request.body(Empty::<Bytes>::new())?;
        let sent_unix_s = unix_now_s();
        let response = sender.send_request(request).await?;
        let came_back_unix_s = unix_now_s();
        let status = response.status();
        let body = http_body_util::Limited::new(response.into_body(), most_bytes)
            .collect()
            .await
            .map_err(|error| anyhow::anyhow!("reading the answer: {error}"))?
            .to_bytes();
        if !status.is_success() {
            let start = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
            bail!("the server answered {status}: {}", start.trim());
        }
        Ok(Answer {
            sent_unix_s,
            came_back_unix_s,
            body,
        })
    }
}

impl Credentials {
    /// `USER[:PASSWORD]` of a URL, percent-decoded; an empty password when
    /// the URL gives none.
    fn of_userinfo(userinfo: &str) -> anyhow::Result<Credentials> {
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        let decode = |text: &str| -> anyhow::Result<String> {
            Ok(percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .context("not UTF-8 once percent-decoded")?
                .into_owned())
        };
        if user.is_empty() {
            bail!("no user");
        }
        Ok(Credentials {
            user: decode(user)?,
            password: decode(password)?,
        })
    }
}

/// A URL as typed, with whatever stands for a password in it (after the
/// user's `:`, before the host's `@`) `***`: for errors about a URL that
/// may not parse.
pub fn masked(text: &str) -> String {
    let authority_start = text.find("://").map_or(0, |scheme| scheme + 3);
    let authority_end = text[authority_start..]
        .find('/')
        .map_or(text.len(), |slash| authority_start + slash);
    let authority = &text[authority_start..authority_end];
    let Some(at) = authority.rfind('@') else {
        return text.to_string();
    };
    let Some(colon) = authority[..at].find(':') else {
        return text.to_string();
    };
    format!(
        "{}***{}",
        &text[..authority_start + colon + 1],
        &text[authority_start + at..]
    )
}

/// An HTTP answer's body, with when the request went and when the answer's
/// head came back (Unix seconds on this machine's clock).
pub(crate) struct Answer {
    pub sent_unix_s: f64,
    pub came_back_unix_s: f64,
    pub body: Bytes,
}

fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}
