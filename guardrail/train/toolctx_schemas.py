"""What ``toolctx`` generates from: the schema model, and the ``train`` family's schemas.

    train  (here)            landmarks, weather forecasts, flights, e-commerce orders,
                             stock quotes, employees, football results
    dev    (toolctx_dev)     product specs, company records, calendar events, GitHub issues,
                             hotels, parcel tracking

The families share no sentence template, no field name (nested-json paths and the money
sub-keys included), no currency and no vocabulary item (cities, people, statuses, ...), so a
score on dev measures generalisation to schemas and phrasings the detector never saw.
Template syntax (rendered by ``toolctx_render``):

    {key} {key:form}  a field of the record, paraphrased; a form forces one wording
                      (``count`` / ``all`` for lists, ``a`` adds an article, ``d`` / ``t``
                      the date / time of a timestamp, ``at`` a timestamp that reads after
                      "at", ``updown`` / ``rosefell`` the direction of a change, ``plain``
                      a number without commas)
    {S} {s}           the record's subject: ``Schema.subject[0]`` on first mention, then
                      the pronoun ``subject[1]`` (sentence start) / ``subject[2]`` (elsewhere)
    {n} {N}           (aggregates only) how many records, as a word / capitalised
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Callable, Optional

Gen = Callable[[random.Random, dict], object]


@dataclass(frozen=True)
class Field:
    """One key of a record: how its value is drawn and paraphrased."""

    key: str                          # a leading "_" keeps it out of every context
    kind: str  # text int float year money pct date datetime time minutes bool list
    vocab: tuple[str, ...] = ()
    lo: float = 0
    hi: float = 0
    places: int = 0                   # float, pct: decimals
    unit: tuple[str, ...] = ()        # numbers: the unit's wordings in answers ("meters", "m")
    wrong: tuple[str, ...] = ()       # numbers: units that make a claim false ("feet")
    words: tuple[str, str] = ("", "")  # bool: (phrase if true, phrase if false)
    cur: str = ""                     # money: the currency of a bare amount; "" = an object
    null: float = 0.0                 # probability of null
    core: bool = False                # always in the context
    path: tuple[str, ...] = ()        # where nested-json puts it (default: top level)
    gen: Optional[Gen] = None         # draws the value from (rng, record so far)
    shared: bool = False              # one value for every record of an instance
    implied_by: tuple[str, ...] = ()  # fields that together give this one away: while they
    #                                   are shown, a claim about it is not "unverifiable"


@dataclass(frozen=True)
class Fact:
    """A sentence template; ``null`` is said instead when a field in it is null."""

    text: str
    null: str = ""
    when: Optional[Callable[[dict], bool]] = None  # only true of records passing this
    needs: tuple[str, ...] = ()       # fields ``when`` reads that the text does not show


@dataclass(frozen=True)
class Schema:
    name: str
    plural: str                       # "flights": what aggregates count
    ident: str                        # the key naming a record (distinct within an instance)
    subject: tuple[str, str, str]     # first mention, pronoun (sentence start), pronoun
    fields: tuple[Field, ...]
    facts: tuple[Fact, ...]
    extras: tuple[str, ...]           # claims that no context of this schema supports
    ask_one: tuple[str, ...]          # user turns about one record
    ask_many: tuple[str, ...]         # user turns about several


@dataclass(frozen=True)
class Family:
    name: str
    schemas: tuple[Schema, ...]
    currencies: dict[str, tuple[str, str, int]]  # code -> (symbol, word, decimals)
    money_keys: tuple[str, str]       # the amount / currency keys of a money object
    intros: tuple[str, ...]           # one ending in ":" puts a blank line after it
    outros: tuple[str, ...]
    aggregates: tuple[str, ...]
    sites: tuple[str, ...]            # search-result domains
    envelope: Callable[[random.Random, object], dict]  # nested-json's wrapper
    tz: tuple[str, ...]               # offsets of timestamps ("Z" = UTC)


def F(key: str, kind: str, *vocab: str, **kw) -> Field:
    return Field(key, kind, tuple(vocab), **kw)


def day(rng: random.Random, r: Optional[dict] = None) -> str:
    return (date(2023, 1, 2) + timedelta(rng.randrange(1090))).isoformat()


def after(key: str, lo: int, hi: int) -> Gen:
    """A date ``lo``..``hi`` days after the record's ``key``."""
    def gen(rng: random.Random, r: dict) -> str:
        return (date.fromisoformat(r[key][:10]) + timedelta(rng.randint(lo, hi))).isoformat()
    return gen


def stamp(tz: tuple[str, ...]) -> Gen:
    def gen(rng: random.Random, r: dict) -> str:
        at = datetime.fromisoformat(day(rng)) + timedelta(hours=rng.randint(6, 21),
                                                           minutes=rng.choice(range(0, 60, 5)))
        return at.strftime("%Y-%m-%dT%H:%M:%S") + rng.choice(tz)
    return gen


def later(key: str, lo: int, hi: int, step: int = 5) -> Gen:
    """A timestamp ``lo``..``hi`` minutes after the record's ``key``, in its time zone."""
    def gen(rng: random.Random, r: dict) -> str:
        minutes = step * rng.randint(lo // step, hi // step)
        at = datetime.fromisoformat(r[key][:19]) + timedelta(minutes=minutes)
        return at.strftime("%Y-%m-%dT%H:%M:%S") + r[key][19:]
    return gen


def person(she: tuple[str, ...], he: tuple[str, ...], last: tuple[str, ...]) -> Gen:
    """A full name; sets the record's pronouns ``_subj`` / ``_obj`` to match."""
    def gen(rng: random.Random, r: dict) -> str:
        female = rng.random() < 0.5
        r["_subj"], r["_obj"] = ("she", "her") if female else ("he", "him")
        return f"{rng.choice(she if female else he)} {rng.choice(last)}"
    return gen


def code(prefix: str, digits: int) -> Gen:
    return lambda rng, r: prefix + "".join(str(rng.randrange(10)) for _ in range(digits))


def other(key: str, vocab: tuple[str, ...]) -> Gen:
    """A vocabulary item other than the record's ``key``."""
    return lambda rng, r: rng.choice([v for v in vocab if v != r[key]])


# ---- the train family ------------------------------------------------------------------------

CITIES = ("Lisbon", "Vienna", "Prague", "Seville", "Edinburgh", "Copenhagen", "Krakow",
          "Bologna", "Porto", "Lyon", "Ghent", "Salzburg", "Bergen", "Valencia", "Dublin",
          "Boston", "Montreal", "Denver", "Chicago", "Toronto")
SHE = ("Emma", "Clara", "Sofia", "Hannah", "Julia", "Laura", "Nina", "Marta", "Elena", "Ingrid")
HE = ("Lukas", "Thomas", "Mateo", "Daniel", "Pierre", "Jonas", "Marco", "Henrik", "Oliver",
      "Tomas")
LAST = ("Weber", "Novak", "Laurent", "Ferreira", "Lindqvist", "Moretti", "Kowalski", "Brennan",
        "Dubois", "Hartmann", "Castillo", "Jensen")
PEOPLE = tuple(f"{a} {b}" for a, b in zip(SHE + HE, LAST * 2))
AIRLINES = {"LH": "Lufthansa", "AF": "Air France", "KL": "KLM", "BA": "British Airways",
            "IB": "Iberia", "TP": "TAP Air Portugal", "SK": "SAS", "AZ": "ITA Airways"}
TICKERS = {"NRVL": "Norvale Systems", "KSTR": "Kestrel Energy", "BRWK": "Bridgework Holdings",
           "HLXT": "Helixa Therapeutics", "QNTA": "Quanta Freight", "MRDN": "Meridian Foods",
           "SLVX": "Silvex Mining", "ORBT": "Orbital Media", "TNDR": "Tender Robotics"}
CLUBS = ("Riverside FC", "Northgate United", "Harbor City", "Eastbrook Rovers",
         "Millford Athletic", "Kingsport FC", "Redcliffe Town", "Ashton Wanderers")
CONDITIONS = ("snow showers", "fog", "sunshine", "overcast skies", "partly cloudy skies",
              "light rain", "thunderstorms")
DRY = ("fog", "sunshine", "partly cloudy skies", "overcast skies")

LANDMARK = Schema(
    "landmark", "landmarks", "name", ("{name}", "it", "the site"),
    (F("id", "text", gen=code("lm_", 5)),
     F("name", "text", "Ostberg Tower", "Calloway Bridge", "Seren Lighthouse", "Mirador Arch",
       "Vellmar Cathedral", "Halvard Palace", "Corvin Observatory", "Lindgate Fortress",
       "Aldermoor Abbey", "Grenholm Castle", "Basalt Gate", "Kessel Clock Tower", core=True),
     F("city", "text", *CITIES, core=True, path=("location", "city")),
     F("height_m", "int", lo=18, hi=540, unit=("meters", "m"), wrong=("feet",)),
     F("completed", "year", lo=1620, hi=2019),
     F("architect", "text", *PEOPLE),
     F("style", "text", "Gothic", "Baroque", "Art Nouveau", "Neoclassical", "Romanesque"),
     F("visitors_per_year", "int", lo=35_000, hi=9_500_000, unit=("visitors",)),
     F("entry_fee", "money", lo=4, hi=38, path=("tickets", "entry_fee")),
     F("open_now", "bool", words=("open right now", "closed right now")),
     F("unesco_site", "bool", words=("a UNESCO World Heritage Site",
                                     "not a UNESCO World Heritage Site"))),
    (Fact("{S} was completed in {completed}."),
     Fact("{S} was finished in {completed} and stands {height_m} tall."),
     Fact("{S} is {height_m} tall."), Fact("{S} is located in {city}."),
     Fact("{S} is in {city} and was designed by {architect}."),
     Fact("The architect of {s} was {architect}."), Fact("{S} draws {visitors_per_year} a year."),
     Fact("Tickets for {name} cost {entry_fee}."), Fact("{S} is {open_now}."),
     Fact("{S} is {unesco_site}."), Fact("{S} was built in the {style} style.")),
    ("{S} is one of the most photographed sights in the region.",
     "{S} was restored after a major fire."),
    ("What do you know about {name}?", "Can you tell me about {name}?",
     "Give me the key facts on {name}."),
    ("Which landmarks came back from the search?", "Give me a quick overview of these landmarks."))

WEATHER = Schema(
    "weather", "days", "date", ("{date}", "", ""),
    (F("location", "text", *CITIES, core=True, shared=True),
     F("_week", "date", shared=True, gen=day),
     F("date", "date", core=True, gen=after("_week", 0, 6)),
     F("temp_high_c", "int", lo=-4, hi=36, unit=("°C", "degrees Celsius"), wrong=("°F",),
       path=("temperature", "high_c")),
     F("condition", "text", *CONDITIONS, core=True, gen=lambda rng, r: rng.choice(
         CONDITIONS[2:] if r["temp_high_c"] > 2 else CONDITIONS[:4])),
     F("temp_low_c", "int", unit=("°C",), wrong=("°F",), path=("temperature", "low_c"),
       gen=lambda rng, r: r["temp_high_c"] - rng.randint(3, 12)),
     F("humidity_pct", "int", lo=25, hi=98, unit=("%", "percent")),
     F("wind_kph", "int", lo=3, hi=65, unit=("km/h", "kilometers per hour"), wrong=("mph",)),
     F("precip_mm", "float", places=1, unit=("mm", "millimeters"), wrong=("inches",),
       gen=lambda rng, r: 0.0 if r["condition"] in DRY else round(rng.uniform(0.4, 32), 1)),
     F("uv_index", "int", lo=0, hi=11),
     F("sunrise", "time", gen=lambda rng, r: f"0{rng.randint(5, 7)}:{rng.randint(0, 59):02d}")),
    (Fact("On {date}, expect {condition} in {location} with a high of {temp_high_c}."),
     Fact("The high on {date} will be {temp_high_c}, with a low of {temp_low_c}."),
     Fact("Humidity on {date} should be around {humidity_pct}."),
     Fact("Winds on {date} will reach {wind_kph}."),
     Fact("Expect {precip_mm} of precipitation on {date}.", when=lambda r: r["precip_mm"] > 0),
     Fact("No precipitation is expected on {date}.", when=lambda r: r["precip_mm"] == 0,
          needs=("precip_mm",)),
     Fact("The UV index on {date} is {uv_index}."), Fact("Sunrise on {date} is at {sunrise}."),
     Fact("The forecast for {location} on {date} calls for {condition}.")),
    ("Pollen levels will be high on {date}.",
     "Conditions should improve by the evening of {date}."),
    ("What's the weather going to be like in {location} on {date}?",
     "What's the forecast for {date}?"),
    ("What does the forecast look like for the next few days?",
     "How's the weather looking this week?"))

FLIGHT = Schema(
    "flight", "flights", "flight_no", ("flight {flight_no}", "it", "the flight"),
    (F("flight_no", "text", core=True,
       gen=lambda rng, r: rng.choice(list(AIRLINES)) + str(rng.randint(100, 1999))),
     F("airline", "text", *AIRLINES.values(), core=True,
       gen=lambda rng, r: AIRLINES[r["flight_no"][:2]]),
     F("departure_city", "text", *CITIES, path=("departure", "city")),
     F("departure_time", "datetime", path=("departure", "time"), gen=stamp(("Z",)),
       implied_by=("arrival_time", "duration_min")),
     F("duration_min", "minutes", gen=lambda rng, r: 5 * rng.randint(9, 144),
       implied_by=("departure_time", "arrival_time")),
     F("arrival_city", "text", *CITIES, path=("arrival", "city"),
       gen=other("departure_city", CITIES)),
     F("arrival_time", "datetime", path=("arrival", "time"),
       gen=lambda rng, r: later("departure_time", r["duration_min"], r["duration_min"])(rng, r),
       implied_by=("departure_time", "duration_min")),
     F("status", "text", "on time", "delayed", "cancelled"),
     F("gate", "text", null=0.3, gen=lambda rng, r: rng.choice("ABCDE") + str(rng.randint(1, 48))),
     F("terminal", "text", "1", "2", "3", "5"),
     F("seats_left", "int", lo=2, hi=40, unit=("seats",)),
     F("fare", "money", lo=49, hi=890, path=("pricing", "fare")),
     F("refundable", "bool", words=("refundable", "non-refundable"),
       path=("pricing", "refundable")),
     F("checked_bag_included", "bool", words=("includes a checked bag",
                                              "does not include a checked bag"))),
    (Fact("{S} departs from {departure_city} at {departure_time:at}."),
     Fact("{S} leaves {departure_city} at {departure_time:t} and lands in {arrival_city} at "
          "{arrival_time:t}."),
     Fact("{S} arrives in {arrival_city} at {arrival_time:at}."),
     Fact("{S} is operated by {airline}."), Fact("{S} takes {duration_min}."),
     Fact("{S} is currently {status}."), Fact("{S} {checked_bag_included}."),
     Fact("{S} boards at gate {gate}.", null="No gate has been assigned to {s} yet."),
     Fact("{S} leaves from Terminal {terminal}."), Fact("There are {seats_left} left on {s}."),
     Fact("The fare for {s} is {fare}."), Fact("The ticket for {s} is {refundable}.")),
    ("{S} is usually operated with an Airbus A320.", "{S} offers free Wi-Fi on board."),
    ("What's the latest on {flight_no}?", "What are the details for flight {flight_no}?"),
    ("What flights are available?", "Can you summarize these flight options?"))

ORDER = Schema(
    "order", "orders", "order_id", ("your order {order_id}", "it", "the order"),
    (F("order_id", "text", core=True, gen=code("ORD-", 6)),
     F("order_status", "text", "processing", "shipped", "delivered", "on hold"),
     F("items", "list", "wireless mouse", "USB-C charging cable", "steel water bottle",
       "yoga mat", "desk lamp", "phone case", "bluetooth speaker", "notebook set",
       "coffee grinder", "running socks"),
     F("order_total", "money", lo=9, hi=480),
     F("placed_on", "date", gen=day),
     F("estimated_delivery", "date", gen=after("placed_on", 2, 9),
       path=("shipping", "estimated_delivery")),
     F("carrier", "text", "DHL", "UPS", "FedEx", "Royal Mail", "GLS", path=("shipping", "carrier")),
     F("shipping_city", "text", *CITIES, path=("shipping", "city")),
     F("payment_card_last4", "text", gen=code("", 4), path=("payment", "card_last4")),
     F("gift_wrap", "bool", words=("gift-wrapped", "not gift-wrapped"))),
    (Fact("{S} was placed on {placed_on}."),
     Fact("{S} is currently marked as {order_status}."), Fact("{S} includes the {items}."),
     Fact("There are {items:count} items in {s}."),
     Fact("The total for {s} came to {order_total}."),
     Fact("{S} should arrive by {estimated_delivery}."), Fact("The carrier for {s} is {carrier}."),
     Fact("{S} will be delivered to {shipping_city}."), Fact("{S} is {gift_wrap}."),
     Fact("{S} was paid with the card ending in {payment_card_last4}.")),
    ("{S} will need a signature on delivery.", "{S} qualifies for free returns within 30 days."),
    ("Any update on my order {order_id}?", "Can you check on order {order_id}?"),
    ("What's the status of my recent orders?", "Can you list my open orders?"))

STOCK = Schema(
    "stock", "stocks", "symbol", ("{company_name} ({symbol})", "it", "the stock"),
    (F("symbol", "text", *TICKERS, core=True),
     F("currency", "text", "USD", core=True),
     F("company_name", "text", *TICKERS.values(), core=True,
       gen=lambda rng, r: TICKERS[r["symbol"]]),
     F("price", "money", lo=4, hi=640, cur="USD", core=True),
     F("change_pct", "pct", places=2, unit=("%", "percent"),
       gen=lambda rng, r: round(rng.choice((-1, 1)) * rng.uniform(0.05, 6), 2)),
     F("volume", "int", lo=400_000, hi=95_000_000, unit=("shares",)),
     F("market_cap", "money", lo=2e9, hi=2.4e12, cur="USD"),
     F("day_high", "money", cur="USD", path=("range", "high"),
       gen=lambda rng, r: round(r["price"] * rng.uniform(1.0, 1.04), 2)),
     F("day_low", "money", cur="USD", path=("range", "low"),
       gen=lambda rng, r: round(r["price"] * rng.uniform(0.96, 1.0), 2)),
     F("exchange", "text", "NASDAQ", "NYSE"),
     F("pe_ratio", "float", lo=8, hi=85, places=1),
     F("dividend_yield_pct", "float", lo=0.2, hi=5, places=2, unit=("%",)),
     F("as_of", "datetime", gen=stamp(("Z",)))),
    (Fact("{S} is trading at {price}."),
     Fact("{S} is {change_pct:updown} today at {price}."),
     Fact("{S} {change_pct:rosefell} on the day."), Fact("{S} has a market cap of {market_cap}."),
     Fact("{S} saw {volume} traded today."),
     Fact("Today's range for {s} is {day_low} to {day_high}."),
     Fact("{S} is listed on the {exchange}."), Fact("{S} has a P/E ratio of {pe_ratio}."),
     Fact("{S} pays a dividend yield of {dividend_yield_pct}."),
     Fact("The quote for {s} is as of {as_of}.")),
    ("{S} reports earnings next week.", "Analysts currently rate {s} a buy."),
    ("How is {symbol} doing today?", "What's the latest quote for {symbol}?"),
    ("How are the stocks on my watchlist doing?", "Give me a market update on these tickers."))

EMPLOYEE = Schema(
    "employee", "employees", "full_name", ("{full_name}", "{_subj}", "{_obj}"),
    (F("employee_id", "text", gen=code("E", 5)),
     F("full_name", "text", core=True, gen=person(SHE, HE, LAST)),
     F("job_title", "text", "Senior Data Engineer", "Product Manager", "Account Executive",
       "UX Designer", "Finance Analyst", "HR Business Partner", "Site Reliability Engineer",
       "Marketing Lead"),
     F("department", "text", "Engineering", "Sales", "Finance", "Marketing", "People Operations",
       "Design"),
     F("office", "text", *CITIES, path=("workplace", "office")),
     F("remote", "bool", words=("works remotely", "works from the office"),
       path=("workplace", "remote")),
     F("start_date", "date", gen=day),
     F("manager", "text", *PEOPLE),
     F("email", "text",
       gen=lambda rng, r: r["full_name"].lower().replace(" ", ".") + "@northwind.example"),
     F("direct_reports", "int", lo=1, hi=12, unit=("direct reports",)),
     F("skills", "list", "Python", "SQL", "negotiation", "Figma", "Kubernetes", "forecasting",
       "Salesforce")),
    (Fact("{S} works as {job_title:a} in the {department} department."),
     Fact("{S} joined the company on {start_date}."), Fact("{S} reports to {manager}."),
     Fact("{S} is based in the {office} office."), Fact("{S} {remote}."),
     Fact("{S} manages {direct_reports}."), Fact("You can reach {s} at {email}."),
     Fact("The skills listed for {s} are {skills}."),
     Fact("{S} is part of the {department} team.")),
    ("{S} was promoted last year.", "{S} speaks fluent Spanish."),
    ("Who is {full_name}?", "What does {full_name} do here?"),
    ("Who is on the team?", "Can you list these employees?"))

MATCH = Schema(
    "match", "matches", "home_team", ("{home_team}", "", ""),
    (F("match_id", "text", gen=code("M-", 4)),
     F("home_team", "text", *CLUBS, core=True),
     F("away_team", "text", *CLUBS, core=True, gen=other("home_team", CLUBS)),
     F("home_score", "int", lo=0, hi=5, core=True, path=("score", "home")),
     F("away_score", "int", lo=0, hi=4, core=True, path=("score", "away")),
     F("match_date", "date", gen=day),
     F("venue", "text", "Riverside Park", "Northgate Stadium", "the Harbor Ground",
       "Millford Lane"),
     F("competition", "text", "Premier Division", "National Cup", "Coastal League"),
     F("attendance", "int", lo=3000, hi=72000, unit=("fans",)),
     F("top_scorer", "text", *PEOPLE),
     F("extra_time", "bool", words=("went to extra time", "was settled in normal time"))),
    (Fact("{home_team} beat {away_team} {home_score}–{away_score}.",
          when=lambda r: r["home_score"] > r["away_score"]),
     Fact("{away_team} won {away_score}–{home_score} away at {home_team}.",
          when=lambda r: r["away_score"] > r["home_score"]),
     Fact("{home_team} and {away_team} drew {home_score}–{away_score}.",
          when=lambda r: r["home_score"] == r["away_score"]),
     Fact("{home_team} hosted {away_team} on {match_date}."),
     Fact("{home_team} played {away_team} at {venue}."),
     Fact("{attendance} watched {home_team} take on {away_team}."),
     Fact("{top_scorer} led the scoring when {home_team} met {away_team}."),
     Fact("The game between {home_team} and {away_team} {extra_time}."),
     Fact("The {home_team} vs {away_team} match was a {competition} fixture.")),
    ("{home_team} are now third in the table.",
     "The referee showed five yellow cards when {home_team} met {away_team}."),
    ("How did {home_team} do against {away_team}?", "What was the score in the {home_team} game?"),
    ("What were this weekend's results?", "Can you recap the latest scores?"))


def _request_id(rng: random.Random) -> str:
    return "req_" + "".join(rng.choice("0123456789abcdef") for _ in range(12))


TRAIN = Family(
    "train", (LANDMARK, WEATHER, FLIGHT, ORDER, STOCK, EMPLOYEE, MATCH),
    {"EUR": ("€", "euros", 2), "GBP": ("£", "pounds", 2), "USD": ("$", "dollars", 2)},
    ("amount", "currency"),
    ("Here's what I found:", "Here are the details:", "I checked the records for you.",
     "Sure thing."),
    ("Let me know if you need anything else.", "Want me to look up anything else?",
     "Happy to dig into more details if needed.", "Note that these values can change quickly."),
    ("I found {n} {plural}.", "There are {n} {plural} in the results."),
    ("wikiatlas.org", "travelnotes.com", "cityguide.net", "flightboard.io", "marketpulse.com",
     "sportsdesk.net"),
    lambda rng, data: {"success": True, "data": data, "request_id": _request_id(rng)},
    ("Z",))
