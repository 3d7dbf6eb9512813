"""Values an answer works out from the context (guardrail.evidence.arithmetic): found
when the sentence says how, never when it does not, read through ContextEvidence."""

import json

from guardrail.evidence.arithmetic import MAX_VALUES, derived
from guardrail.evidence.features import ContextEvidence
from guardrail.evidence.values import numbers

PLAN = json.dumps({"user": "jdoe", "plan": "Pro", "seats": 5, "seats_used": 3,
                   "monthly_price_usd": 49, "renews_on": "2026-01-15"})
MEETING = json.dumps({"event": "Planning", "start": "2025-09-18T14:00:00",
                      "end": "2025-09-18T15:30:00", "room": "4.12"})


def missing(ev, sentence):
    return [n.value for n in ev.features(sentence).missing_numbers]


def test_a_difference_a_sum_and_a_rate_the_sentence_announces():
    ev = ContextEvidence.build([PLAN])
    assert missing(ev, "You have 5 seats and 3 are in use, so 2 are still free.") == []
    assert missing(ev, "Your 5 seats and the 3 in use make 8 in all.") == []
    assert missing(ev, "It costs $49 a month, or $588 a year.") == []
    assert missing(ev, "It costs about $590 a year.") == []   # hedged: within 10 %


def test_without_its_words_or_off_by_one_a_worked_out_value_is_missing():
    ev = ContextEvidence.build([PLAN])
    assert missing(ev, "You have 2 seats.") == [2.0]          # no "left", "still"...
    assert missing(ev, "It costs $49 a month, or $600 a year.") == [600.0]
    assert missing(ev, "You have 8 seats.") == [8.0]          # no "in all", "total"...
    # 2 = 5 - 3 of the context is what is left of a whole (``seats`` minus
    # ``seats_used``); any other two of its values are not enough
    assert missing(ev, "It still has 2 seats.") == []
    assert missing(ev, "It still has 44 seats.") == [44.0]    # 49 - 5: no whole and its use
    assert missing(ev, "Of your 5 seats, 3 are in use, so 1 is still free.") == [1.0]


def test_the_time_between_two_times_of_the_context():
    ev = ContextEvidence.build([MEETING])
    assert missing(ev, "It lasts 90 minutes.") == []
    assert missing(ev, "It runs for 1 hour 30 minutes.") == []   # a duration
    assert missing(ev, "It lasts 75 minutes.") == [75.0]


def test_a_grounding_with_many_numbers_derives_nothing():
    values = [float(v) for v in range(1, MAX_VALUES + 2)]
    (n,) = numbers("$120 a year")
    assert not derived("$120 a year", n, values)
    assert derived("$120 a year", n, values[:MAX_VALUES])    # 10 a month



BANK = json.dumps({"transactions": [
    {"id": "t1", "description": "TRADER JOE'S", "amount": -64.18},
    {"id": "t2", "description": "SHELL", "amount": -48.9},
    {"id": "t3", "description": "SPOTIFY", "amount": -11.99},
    {"id": "t4", "description": "PAYROLL", "amount": 2310.55},
    {"id": "t5", "description": "CITY WATER", "amount": -82.4}]})
INVOICES = json.dumps({"invoices": [
    {"number": "INV-1", "amount_due_cents": 480000, "status": "paid"},
    {"number": "INV-2", "amount_due_cents": 480000, "status": "open"},
    {"number": "INV-3", "amount_due_cents": 126550, "status": "open"},
    {"number": "INV-4", "amount_due_cents": 95000, "status": "void"}]})


def test_a_total_over_records():
    ev = ContextEvidence.build([BANK])
    # the four charges (every negative amount)
    assert missing(ev, "There are four charges totaling $207.47.") == []
    assert missing(ev, "There are four charges totaling $217.47.") == [217.47]
    assert missing(ev, "There are four charges for $207.47.") == [207.47]   # no "total"
    ev = ContextEvidence.build([INVOICES])
    # as many records as it counts first, in units of the cents the key names
    assert missing(ev, "There are two open invoices totaling $6,065.50.") == []
    assert missing(ev, "There are three open invoices totaling $6,065.50.") == [6065.5]
    assert missing(ev, "INV-2 is for $4,800.") == []


MUSEUM = json.dumps({"name": "Harbourside Museum", "hours": {"tue": {"open": "10:00",
                                                                     "close": "17:00"}},
                     "last_entry_minutes_before_close": 45})


def test_a_time_a_span_the_sentence_states_away_from_one_of_the_context():
    ev = ContextEvidence.build([MUSEUM])
    sentence = "Last entry is 45 minutes before closing, so 4:15 PM on a regular day."
    assert missing(ev, sentence) == [] and ev.features(sentence).field_changed is None
    assert missing(ev, "Last entry is 45 minutes before closing, so 4:30 PM.") == [990.0]
    assert missing(ev, "Last entry is at 4:15 PM.") == [975.0]    # no span stated


def test_a_value_each_times_a_count_and_a_rough_time_between_two_times():
    booking = json.dumps({"restaurant": "Lume", "party_size": 4, "cancellation_fee_usd": 25})
    ev = ContextEvidence.build([booking])
    assert missing(ev, "The fee is $25 per person, so $100 for your party.") == []
    assert missing(ev, "The fee is $25 per person, so $125 for your party.") == [125.0]
    # without "each": two values of the record multiplied, which chance seldom gives
    # (three results of one pair, 3 / 100; totals.py)
    assert missing(ev, "The fee is $25, or $100 for your party.") == []
    assert missing(ev, "The fee is $25, or $120 for your party.") == [120.0]
    run = json.dumps({"created_at": "2025-05-20T13:02:11Z", "updated_at": "2025-05-20T13:16:48Z"})
    ev = ContextEvidence.build([run])
    assert missing(ev, "The whole run took just under 15 minutes.") == []
    assert missing(ev, "The whole run took 15 minutes.") == [15.0]      # said exactly: 14
    assert missing(ev, "The whole run took about 25 minutes.") == [25.0]


def test_worked_out_against_a_context_value_of_the_same_sort():
    usage = json.dumps({"month": "July", "kwh": 912, "previous_period_kwh": 768,
                        "tickets": {"lawn_usd": 42, "fees_usd": 8.9, "left": 12}})
    ev = ContextEvidence.build([usage])
    assert missing(ev, "You used 912 kWh in July, 144 kWh more than the previous period.") == []
    assert missing(ev, "You used 912 kWh in July, 154 kWh more than the previous period.") \
        == [154.0]
    assert missing(ev, "The lawn is $42, or $50.90 once fees are added.") == []
    # "8 left" is no sum or difference of "$42" and a context value: not of one sort
    assert missing(ev, "The lawn is $42 plus fees, and 34 are left.") == [34.0]
    home = json.dumps({"price_usd": 425000, "down_payment_usd": 85000, "hours": 40,
                       "hours_per_day": 8})
    ev = ContextEvidence.build([home])
    assert missing(ev, "With $85,000 down on a $425,000 home, it is a 20% down payment.") == []
    assert missing(ev, "With $85,000 down on a $425,000 home, it is a 25% down payment.") \
        == [25.0]
    assert missing(ev, "You have 40 hours, which is 5 days at 8 hours a day.") == []


def test_a_time_an_hour_said_in_words_away():
    flight = json.dumps({"flight": "LX 318", "departure": "2025-06-02T09:40:00"})
    ev = ContextEvidence.build([flight])
    assert missing(ev, "Check-in opens an hour beforehand, so from 8:40 AM.") == []
    assert missing(ev, "Check-in opens an hour beforehand, so from 8:10 AM.") == [490.0]


def test_what_is_left_of_a_whole_a_share_of_a_record_and_one_keys_difference():
    gym = json.dumps({"classes": [
        {"name": "Vinyasa Flow", "capacity": 20, "booked": 12, "duration_min": 60},
        {"name": "HIIT Express", "capacity": 15, "booked": 8, "duration_min": 30}]})
    ev = ContextEvidence.build([gym])
    assert missing(ev, "Vinyasa Flow has 8 spots left.") == []
    assert missing(ev, "Vinyasa Flow has 9 spots left.") == [9.0]
    assert missing(ev, "Vinyasa Flow has 7 spots left.") == [7.0]  # HIIT Express's
    errors = json.dumps({"errors": [{"kind": "timeout", "count": 1108, "of_total": 1335},
                                    {"kind": "declined", "count": 227, "of_total": 1335}]})
    ev = ContextEvidence.build([errors])
    assert missing(ev, "Most of them, 1,108 or about 83%, are timeouts.") == []
    assert missing(ev, "Most of them, 1,108 or about 88%, are timeouts.") == [88.0]
    test = json.dumps({"variants": [{"name": "A", "signups": 1240}, {"name": "B",
                                                                     "signups": 1394}]})
    ev = ContextEvidence.build([test])
    assert missing(ev, "That's 154 more signups from the same traffic.") == []
    assert missing(ev, "That's 150 more signups from the same traffic.") == [150.0]


def test_a_share_of_a_whole_a_sum_across_records_and_what_is_under_a_budget():
    battery = json.dumps({"soc_pct": 62, "capacity_kwh": 13.5})
    ev = ContextEvidence.build([battery])
    assert missing(ev, "Your battery is at 62%, roughly 8.4 kWh of its 13.5 kWh capacity.") == []
    assert missing(ev, "Your battery is at 62%, roughly 9.4 kWh of its 13.5 kWh capacity.") \
        == [9.4]
    bins = json.dumps({"sku": "HX-4410", "bins": [{"bin": "A1", "qty": 2000},
                                                   {"bin": "B4", "qty": 1500},
                                                   {"bin": "C2", "qty": 1000}]})
    ev = ContextEvidence.build([bins])
    assert missing(ev, "There are 4,500 units across three bins.") == []
    assert missing(ev, "There are 4,600 units across three bins.") == [4600.0]
    spend = json.dumps({"month": "May", "budget_usd": 500, "spent_usd": 426.27})
    ev = ContextEvidence.build([spend])
    assert missing(ev, "You stayed $73.73 under budget.") == []
    assert missing(ev, "You stayed $83.73 under budget.") == [83.73]
    rating = json.dumps({"player": "Rapid", "rating": 1684, "peak": 1731})
    ev = ContextEvidence.build([rating])
    assert missing(ev, "Rapid sits at 1684, 47 below their peak of 1731.") == []


def test_a_difference_between_records_needs_a_comparison_and_the_key_it_counts():
    rink = json.dumps({"sessions": [{"type": "public_skate", "capacity": 150, "price_usd": 9},
                                    {"type": "stick_and_puck", "capacity": 30, "price_usd": 18},
                                    {"type": "freestyle", "capacity": 20, "price_usd": 14}]})
    ev = ContextEvidence.build([rink])
    # 4 = 18 - 14 (two prices): no count of spots
    assert missing(ev, "Stick and puck has 4 spots still open.") == [4.0]


def test_a_price_each_times_a_count_the_sentence_states_and_a_package_left():
    quote = json.dumps({"venue": "Old Mill", "catering_per_guest_usd": 68.5, "guests": 120,
                        "prev_period_kwh": 52600, "package_hours": 10, "hours_used": 4.5})
    ev = ContextEvidence.build([quote])
    assert missing(ev, "Catering is $68.50 per guest, which comes to $8,220 for 120 guests.") == []
    assert missing(ev, "Catering is $68.50 per guest, which comes to $8,320 for 120 guests.") \
        == [8320.0]
    assert missing(ev, "Use was 48,250 kWh, down 4,350 kWh from the previous period.") == []
    assert missing(ev, "She has 5.5 of her 10 package hours left.") == []
    assert missing(ev, "She has 6.5 of her 10 package hours left.") == [6.5]


def test_a_mean_over_records_and_what_a_goal_leaves():
    kit = json.dumps({"meals": [{"name": "Tacos", "prep_min": 25}, {"name": "Curry",
                                                                      "prep_min": 30},
                                {"name": "Risotto", "prep_min": 40}], "xp_goal": 2500})
    ev = ContextEvidence.build([kit])
    assert missing(ev, "That's about 32 minutes of prep on average.") == []
    assert missing(ev, "That's about 52 minutes of prep on average.") == [52.0]
    assert missing(ev, "You've earned 1,840 XP, which leaves 660 to hit your 2,500 goal.") == []


SEATS = json.dumps({"product": "Figma Professional", "seats_purchased": 50,
                    "seats_assigned": 43, "pages": 42, "copies": 2,
                    "visits": [{"downtime_min": 45}, {"downtime_min": 180},
                               {"downtime_min": 60}], "used_gb": 45.7, "quota_gb": 50})


def test_a_sentence_that_shows_its_working_on_values_the_grounding_states():
    ev = ContextEvidence.build([SEATS])
    # no cue word needed: the operands are the sentence's own, each stated by the grounding
    assert missing(ev, "You have 7 unassigned seats, since 43 of your 50 are assigned.") == []
    assert missing(ev, "It is 42 pages times two copies, so 84 pages.") == []
    assert missing(ev, "You're using 45.7 GB of your 50 GB, which is roughly 91%.") == []
    # one worked out from what the first pass worked out: a total said again in hours
    assert missing(ev, "In all it was down for 285 minutes, or 4 hours 45 minutes.") == []
    # off by one, or an operand the grounding lacks, is still a value it lacks
    assert missing(ev, "You have 8 unassigned seats, since 43 of your 50 are assigned.") == [8.0]
    assert sorted(missing(ev, "You have 6 unassigned seats, since 44 of your 50 are "
                                  "assigned.")) == [6.0, 44.0]
    assert missing(ev, "It is 42 pages times two copies, so 86 pages.") == [86.0]


COURSES = json.dumps({"enrollments": [
    {"course": "CS 2110", "credits": 4, "status": "enrolled"},
    {"course": "MATH 2940", "credits": 4, "status": "enrolled"},
    {"course": "PHYS 2213", "credits": 4, "status": "waitlisted"},
    {"course": "ENGL 1170", "credits": 3, "status": "enrolled"}], "credit_limit": 20})


def test_a_count_then_a_total_of_the_key_it_names():
    ev = ContextEvidence.build([COURSES])
    assert missing(ev, "You're enrolled in three courses, for 11 credits.") == []
    assert missing(ev, "You're enrolled in three courses, for 13 credits.") == [13.0]
    # the count alone is no cue for a key it does not name
    assert missing(ev, "You're enrolled in three courses, for 11 points.") == [11.0]


GARAGE = json.dumps({"facility": {"name": "Harbor Point Garage"}, "levels": [
    {"level": "P1", "total_spaces": 120, "occupied": 118},
    {"level": "P2", "total_spaces": 150, "occupied": 97},
    {"level": "P3", "total_spaces": 150, "occupied": 41}], "open_24h": False})


def test_what_is_left_over_every_record_and_a_flag_named_with_its_digits():
    ev = ContextEvidence.build([GARAGE])
    f = ev.features("Harbor Point Garage has 164 open spaces out of 420.")
    assert f.missing_numbers == () and f.field_changed is None  # "open" is no ``open 24h``
    assert missing(ev, "Harbor Point Garage has 166 open spaces out of 420.") == [166.0]
    assert ev.features("The garage is open 24 hours.").field_changed == "open 24h: false"


def test_a_share_of_a_value_the_sentence_states_that_its_record_holds_part_of():
    channels = json.dumps({"channels": [{"channel": "email", "sessions": 4680, "orders": 164},
                                        {"channel": "social", "sessions": 9120, "orders": 137}]})
    ev = ContextEvidence.build([channels])
    assert missing(ev, "Email converted best, at roughly 3.5% of its 4,680 sessions.") == []
    assert missing(ev, "Email converted best, at roughly 4.5% of its 4,680 sessions.") == [4.5]


def test_working_on_the_groundings_own_values_behind_rounded_ones():
    sales = json.dumps({"rows": [{"region": "North America", "quarter": "Q3", "revenue": 1284500},
                                 {"region": "North America", "quarter": "Q4", "revenue": 1391200},
                                 {"region": "EMEA", "quarter": "Q3", "revenue": 842300}]})
    ev = ContextEvidence.build([sales])
    assert missing(ev, "North America grew from about $1.28M to $1.39M, up $106,700.") == []
    assert missing(ev, "North America grew from about $1.28M to $1.39M, up $116,700.") \
        == [116700.0]


def test_as_many_records_as_the_sentence_counts_add_up_to_its_total():
    invoices = json.dumps({"invoices": [{"id": "in_1", "amount_cents": 1599, "status": "paid"},
                                        {"id": "in_2", "amount_cents": 1799, "status": "paid"},
                                        {"id": "in_3", "amount_cents": 1799, "status": "failed"},
                                        {"id": "in_4", "amount_cents": 1799, "status": "paid"}]})
    ev = ContextEvidence.build([invoices])
    assert missing(ev, "Altogether you've paid $51.97 over the last three months.") == []
    # three of 1599, 1799, 1799 and 1799 cents make 51.97 or 53.97, never 52.97
    assert missing(ev, "Altogether you've paid $52.97 over the last three months.") == [52.97]


def test_shares_and_ratios_of_a_records_values_and_another_records_of_one_key():
    pods = json.dumps({"pods": [{"name": "search-api", "cpu_millicores": 410,
                                 "cpu_limit_millicores": 1000, "restarts": 4},
                                {"name": "search-indexer-0", "cpu_millicores": 1620,
                                 "cpu_limit_millicores": 2000, "restarts": 0}]})
    ev = ContextEvidence.build([pods])
    assert missing(ev, "search-indexer-0 is using about 81% of its CPU limit.") == []
    assert missing(ev, "search-indexer-0 is using 81% of its CPU limit.") == []
    assert missing(ev, "search-indexer-0 is using 83% of its CPU limit.") == [83.0]
    ads = json.dumps({"campaigns": [{"name": "Retargeting", "spend": 1975.10, "revenue": 14195,
                                     "purchases": 167},
                                    {"name": "Prospecting", "spend": 4820.35, "revenue": 17840,
                                     "purchases": 214}]})
    ev = ContextEvidence.build([ads])
    assert missing(ev, "Retargeting's £1,975.10 in spend came to around £11.83 per purchase.") \
        == []
    assert missing(ev, "Retargeting's £1,975.10 in spend came to around £12.83 per purchase.") \
        == [12.83]
    assert missing(ev, "Prospecting returned about 3.7 times its £4,820.35 spend.") == []
    assert missing(ev, "Prospecting returned about 4.7 times its £4,820.35 spend.") == [4.7]
    servers = json.dumps({"servers": [{"name": "pg-primary", "cost": 750},
                                      {"name": "pg-replica", "cost": 375},
                                      {"name": "web", "cost": 420}]})
    ev = ContextEvidence.build([servers])
    assert missing(ev, "The primary was $750, and together with the replica the database "
                       "tier cost $1,125.") == []
    assert missing(ev, "The primary was $750, and together with the replica the database "
                       "tier cost $1,225.") == [1225.0]


def test_a_mean_fee_difference_and_overrun_the_sentence_announces():
    games = json.dumps({"stats": {"points_per_game": 24.6, "games_played": 68},
                        "last_5_games": [{"opponent": o, "points": p, "result": r} for o, p, r in
                                         [("DEN", 31, "W"), ("SAC", 18, "L"), ("UTA", 27, "W"),
                                          ("LAL", 22, "L"), ("PHX", 35, "W")]]})
    ev = ContextEvidence.build([games])
    f = ev.features("Over his last five games he averaged 26.6 points, and Portland went 3-2.")
    assert f.missing_numbers == () and f.field_changed is None
    assert missing(ev, "Over his last five games he averaged 28.6 points.") == [28.6]
    car = json.dumps({"current_odometer_mi": 48210, "next_due": {"service": "oil_change",
                                                                 "at_odometer_mi": 49000}})
    ev = ContextEvidence.build([car])
    assert missing(ev, "The next oil change is due at 49,000 miles, and you're 790 miles away.") \
        == []
    assert missing(ev, "The next oil change is due at 49,000 miles, and you're 890 miles away.") \
        == [890.0]
    budget = json.dumps({"budget": 780000, "forecast": 742200, "committed": 39800})
    ev = ContextEvidence.build([budget])
    assert missing(ev, "Adding the $39,800 already committed brings the total to $782,000, "
                       "which would be $2,000 over.") == []
    assert missing(ev, "Adding the $39,800 already committed brings the total to $782,000, "
                       "which would be $3,000 over.") == [3000.0]


def test_a_change_in_percent_and_a_span_between_a_records_times():
    budget = json.dumps({"budgets": [{"name": "sandbox", "limit": 1500, "spent": 1620.77},
                                     {"name": "prod", "limit": 25000, "spent": 21480.1}],
                         "slo_threshold_ms": 300, "peak_ms": 412})
    ev = ContextEvidence.build([budget])
    assert missing(ev, "Sandbox has spent $1,620.77 of its $1,500 budget, about 8% over.") == []
    assert missing(ev, "Sandbox has spent $1,620.77 of its $1,500 budget, about 18% over.") \
        == [18.0]
    assert missing(ev, "The peak is 412 ms, about 37% over the SLO.") == []
    assert missing(ev, "The peak is 412 ms, about 47% over the SLO.") == [47.0]
    incidents = json.dumps({"incidents": [
        {"number": 3316 + i, "title": t, "created_at": f"2025-07-18T0{i}:05:39Z",
         "acknowledged_at": f"2025-07-18T0{i}:{12 + 10 * i}:02Z"} for i, t in
        enumerate(["Disk usage on pg-replica-3", "Latency on checkout", "Errors on auth",
                   "Queue depth on billing", "Memory on search", "CPU on ingest",
                   "Lag on kafka"])]})
    ev = ContextEvidence.build([incidents])  # 14 times: those of its record count
    assert missing(ev, "Disk usage on pg-replica-3 was acknowledged about six minutes after "
                       "it opened.") == []
    assert missing(ev, "Disk usage on pg-replica-3 was acknowledged about nine minutes after "
                       "it opened.") == [9.0]
    meeting = json.dumps({"event": "Design review", "start": "2025-09-18T14:00:00",
                          "end": "2025-09-18T15:30:00"})
    ev = ContextEvidence.build([meeting])
    assert missing(ev, "It's a 90-minute call.") == []
    assert missing(ev, "It's a 60-minute call.") == [60.0]


def test_a_ratio_with_a_records_value_never_excuses_a_whole_number_by_rounding():
    booking = json.dumps({"room": {"name": "Neon Suite", "capacity": 12},
                          "rate": {"per_hour_cents": 6500, "min_hours": 2},
                          "food_package": {"name": "Party Platter B", "price_cents": 8900}})
    ev = ContextEvidence.build([booking])  # 195 / 2 is 97.5, "about 98" at best
    assert missing(ev, "Three hours at $65 an hour comes to $195, plus $98 for Party "
                       "Platter B.") == [98.0]


def test_gains_and_losses_of_one_column_add_up_together():
    positions = json.dumps({"positions": [{"symbol": "VTI", "unrealized_pl": 2210.0},
                                          {"symbol": "MSFT", "unrealized_pl": 976.2},
                                          {"symbol": "NKE", "unrealized_pl": -1193.4},
                                          {"symbol": "BND", "unrealized_pl": -42.5}]})
    ev = ContextEvidence.build([positions])
    assert missing(ev, "You're up about $1,950 in unrealized gains across your holdings.") == []
    assert missing(ev, "You're up about $2,950 in unrealized gains across your holdings.") \
        == [2950.0]


def test_a_value_said_roughly_is_as_precise_as_its_last_digit_that_is_not_zero():
    service = json.dumps({"vehicle": "V-104", "odometer_mi": 118742, "next_service_mi": 120460})
    ev = ContextEvidence.build([service])
    said = "At 118,742 miles now, the next one is due at 120,460, so in about {} miles."
    assert missing(ev, said.format("1,700")) == []    # 1,718 to the hundred
    assert missing(ev, said.format("1,800")) == [1800.0]
    assert missing(ev, said.format("1,730")) == [1730.0]  # to the ten: 1,720
    # a bound is no rounding: "over 25,000" stays as written
    assert [n.precision for n in numbers("anything over $25,000")] == [0.5]
    assert [n.precision for n in numbers("about 30,000 cubic meters")] == [5000.0]


LOCKOUT = json.dumps({"job": "LK-1", "keys_cut": 3, "callout_fee_usd": 95.0,
                      "after_hours_usd": 45.0, "labor_usd": 60.0, "total_usd": 213.5})
QUOTE = json.dumps({"vendor": "Finch", "total_cents": 84000,
                    "fabric": {"price_per_m_cents": 4200, "needed_m": 6}})


def test_a_sentence_that_itemises_a_whole_on_values_the_grounding_states():
    ev = ContextEvidence.build([LOCKOUT])
    # a part: the whole and every other part stated, and the sum closes to the cent
    assert missing(ev, "The bill came to $213.50: a $95 call-out fee, a $45 after-hours "
                       "surcharge, $60 for labor and $13.50 for the keys.") == []
    # a part that does not close the sum, or a whole the grounding lacks
    assert missing(ev, "The bill came to $213.50: a $95 call-out fee, a $45 after-hours "
                       "surcharge, $60 for labor and $14.50 for the keys.") == [14.5]
    assert sorted(missing(ev, "The bill came to $223.50: a $95 call-out fee, a $55 "
                              "surcharge, $60 for labor and $13.50 for the keys.")) \
        == [13.5, 55.0, 223.5]
    # two values of a sort are no itemised whole, nor is a hedged one
    assert missing(ev, "The fee was $95, and $13.50 went on keys.") == [13.5]
    assert missing(ev, "The bill came to about $213.50: a $95 fee, a $45 surcharge, $60 "
                       "for labor and $13.50 for the keys.") == [13.5]
    # the whole, with one part a count it states times a rate it states
    ev = ContextEvidence.build([QUOTE])
    assert missing(ev, "Finch quotes $840, and adding the 6 meters of tweed at $42 a meter "
                       "brings it to $1,092.") == []
    assert missing(ev, "Finch quotes $840, and adding the 6 meters of tweed at $42 a meter "
                       "brings it to $1,102.") == [1102.0]
    assert sorted(missing(ev, "Finch quotes $840, and adding the 7 meters of tweed at $42 a "
                              "meter brings it to $1,134.")) == [7.0, 1134.0]


STAY = {"listing": "Casa Azul", "rate_first_nights_usd": 410, "rate_last_nights_usd": 465,
        "first_nights": 2, "cleaning_fee_usd": 95, "member_discount_usd": 11}


def test_an_itemised_whole_with_parts_times_counts_and_a_discount_taken_off():
    ev = ContextEvidence.build([json.dumps(STAY)])
    assert missing(ev, "The rate is $410 for the first two nights and $465 for the last two, "
                       "so $1,750 in rent.") == []
    assert missing(ev, "The rate is $410 for the first two nights and $465 for the last two, "
                       "so $1,760 in rent.") == [1760.0]
    # a part the sentence calls a discount is taken off, not added
    ev = ContextEvidence.build([json.dumps({**STAY, "rent_usd": 1750})])
    assert missing(ev, "You pay $1,834: $1,750 in rent and a $95 cleaning fee, less your $11 "
                       "member discount.") == []
    assert missing(ev, "You pay $1,856: $1,750 in rent, a $95 cleaning fee and an $11 "
                       "member discount.") == [1856.0]


def test_between_them_announces_a_sum_over_the_records_it_counts():
    flights = json.dumps({"operator": "Skyward", "flights": [
        {"id": "A", "envelope_cuft": 210000, "status": "completed", "passengers": 12,
         "launch": "2025-09-21T07:05:00", "landing": "2025-09-21T08:10:00", "distance_km": 14.8,
         "max_altitude_ft": 2900, "propane_used_gal": 38},
        {"id": "B", "envelope_cuft": 105000, "status": "completed", "passengers": 6,
         "launch": "2025-09-21T07:12:00", "landing": "2025-09-21T08:02:00", "distance_km": 11.3,
         "max_altitude_ft": 1800, "propane_used_gal": 22},
        {"id": "C", "envelope_cuft": 160000, "status": "scrubbed", "passengers": 0,
         "passengers_rebooked": 4}]})
    ev = ContextEvidence.build([flights])
    said = "Two of the three flights went up on Sunday, carrying 18 passengers between them."
    assert missing(ev, said) == []
    assert missing(ev, said.replace("18", "19")) == [19.0]


def test_a_span_left_of_a_span_the_sentence_states_and_a_cap_less_the_entries():
    rest = ContextEvidence.build([json.dumps({"musher": "K. Berg", "rest_logged_min": 398,
                                              "mandatory_rest_h": 8})])
    said = ("With 6 hours 38 minutes of rest logged against the 8-hour requirement, "
            "you still need to take {}.")
    assert missing(rest, said.format("1 hour 22 minutes")) == []
    assert missing(rest, said.format("1 hour 32 minutes")) == [92.0]
    courses = ContextEvidence.build([json.dumps({"courses": [
        {"course": "Score", "cap": 30, "entered": 9, "fee_usd": 6},
        {"course": "White", "cap": 20, "entered": 14, "fee_usd": 5},
        {"course": "Brown", "cap": 25, "entered": 25, "fee_usd": 5}]})])
    assert missing(courses, "The Score course has 21 spots left.") == []
    assert missing(courses, "The Score course has 19 spots left.") == [19.0]


def test_a_value_that_is_no_span_beside_two_spans_is_read_without_error():
    ev = ContextEvidence.build([json.dumps({"sessions": [{"hours": 2, "fee_usd": 40},
                                                         {"hours": 3, "fee_usd": 55}]})])
    # two spans the grounding states and a price it lacks: the price is missing, and
    # the spans' difference is not tried against a value that is no span
    assert missing(ev, "The 2-hour and 3-hour sessions cost $97 together.") == [97.0]


def test_quantities_added_times_a_price_each_and_grams_at_a_price_per_kilo():
    yarn = ContextEvidence.build([json.dumps({"order": [
        {"yarn": "Merino DK", "colour": "Foxglove", "skeins": 20, "price_each": 14.0},
        {"yarn": "Merino DK", "colour": "Low Tide", "skeins": 15, "price_each": 14.0},
        {"yarn": "Sock", "colour": "Ember", "skeins": 30, "price_each": 12.5}]})])
    said = "The Merino DK lines, 20 skeins of Foxglove and 15 of Low Tide at $14 each, come to "
    assert missing(yarn, said + "$490.") == []
    assert missing(yarn, said + "$504.") == [504]
    truffles = ContextEvidence.build([json.dumps({"lots": [
        {"grade": "extra", "grams": 310, "price_per_kg": 1800},
        {"grade": "first", "grams": 455, "price_per_kg": 1200}]})])
    said = "The 310 grams of extra grade at $1,800 per kilo come to "
    assert missing(truffles, said + "$558.") == []
    assert missing(truffles, said + "$585.") == [585]
    # no word of a price: a sum of quantities times an amount is no reading of it (the
    # value is right all the same: the line totals of the two records it counts read it)
    said = "You ordered 20 and 15 skeins of Merino DK, $14 and $490."
    n = numbers(said)[-1]
    assert not derived(said, n, [20, 14.0, 15, 14.0, 30, 12.5], said=numbers(said))
    assert missing(yarn, said) == []
    assert missing(yarn, said.replace("$490", "$504")) == [504]


def test_a_share_of_what_a_key_adds_up_to_over_the_records():
    survey = ContextEvidence.build([json.dumps({"detections": [
        {"species": "White-tailed deer", "events": 48}, {"species": "Raccoon", "events": 22},
        {"species": "Wild turkey", "events": 19}, {"species": "Coyote", "events": 28}]})])
    said = "White-tailed deer dominated with 48 events, about "
    assert missing(survey, said + "41% of the total.") == []   # 48 of 117
    assert missing(survey, said + "60% of the total.") == [60]


def test_a_count_of_the_items_a_sentence_lists_after_a_colon():
    """"Three entries caught my eye: A, then B, followed by C": the count is how many
    items follow (commas, "and", "then", "followed by"); a list of another length, or an
    item with a comma in it, leaves the count a value the result lacks."""
    ev = ContextEvidence.build(["vendor,amount,date,receipt\nStaples,87.43,2025-02-07,no\n"
                                "Uber,23.10,2025-02-19,no\nDelta,412.00,2025-02-11,yes\n"
                                "Hilton,250.00,2025-02-12,yes\nLyft,18.20,2025-02-13,yes\n"
                                "Avis,96.00,2025-02-14,yes\n"])
    said = ("Three entries caught my eye: the Staples purchase, then the Uber ride on "
            "February 19, followed by the Delta flight.")
    assert missing(ev, said) == []
    assert missing(ev, said.replace("Three", "Five")) == [5.0]
    assert missing(ev, "Two entries caught my eye: the Staples purchase and the Uber "
                       "ride.") == []
    assert missing(ev, "Two entries caught my eye: the Staples purchase, on February 7, and "
                       "the Uber ride.") == [2.0]


def test_a_total_in_another_unit_of_the_keys_dimension_is_no_sum_of_it():
    """"rode a combined 258.9 miles" where the riders' ``distance_km`` add up to 258.9:
    the unit is changed, not the value worked out (turns-ay/14)."""
    riders = json.dumps({"riders": [{"rider": r, "deliveries": d, "distance_km": km}
                                    for r, d, km in (("Ines", 27, 61.3), ("Kofi", 31, 58.9),
                                                     ("Beth", 19, 44.7), ("Tomas", 24, 67.8),
                                                     ("Ada", 12, 26.2))]})
    ev = ContextEvidence.build([riders])
    said = "Across the five riders, the team rode a combined {}."
    assert missing(ev, said.format("258.9 km")) == []
    assert missing(ev, said.format("160.9 miles")) == []   # 258.9 km in miles
    assert missing(ev, said.format("258.9 miles")) == [258.9]


def test_a_price_a_head_times_a_keys_total_over_the_records():
    """"At $4.10 a head, the work so far comes to $5,908.10" (turns-az/24): the shearers'
    ``sheep`` added up over the days (1,441) times the price the sentence states; a
    changed total, or a price said without its word, stays a value the result lacks."""
    shearing = json.dumps({"rate_per_head_usd": 4.10, "days": [
        {"date": f"2024-11-0{i}", "sheep": s} for i, s in enumerate((312, 224, 265, 310, 330),
                                                                   start=4)]})
    ev = ContextEvidence.build([shearing])
    assert missing(ev, "At $4.10 a head, the work so far comes to $5,908.10.") == []
    assert missing(ev, "At $4.10 a head, the work so far comes to $5,980.10.") == [5980.1]
    assert missing(ev, "So far the work comes to $5,908.10.") == [5908.1]


def test_a_records_share_to_digits_chance_seldom_hits_needs_no_word():
    """"Red maple came in at 92.5%": 111 alive of 120 planted, a share of two values of its
    row; with few values in the row, one of a dozen ratios seldom lands on three digits
    by chance.  "80%" has two: it still needs a word ("about", "of")."""
    trees = ("species,planted_2024,alive_2025,avg_height_ft,replacement_cost_usd\n"
             "Red maple,120,111,9.5,310\nGinkgo,64,63,8.0,365\nEastern redbud,45,36,6.5,275\n")
    ev = ContextEvidence.build([trees])
    assert not ev.features("Red maple came in at 92.5%.").missing_numbers
    assert ev.features("Red maple came in at 93.5%.").missing_numbers
    assert ev.features("Eastern redbud came in at 80%.").missing_numbers


def test_a_difference_said_with_a_comparative_adjective():
    ev = ContextEvidence.build([json.dumps({"huts": [
        {"hut": "Sea Holly", "price_gbp": 420, "distance_to_car_park_m": 290},
        {"hut": "Marram", "price_gbp": 390, "distance_to_car_park_m": 350}]})])
    said = "Sea Holly costs £420 and sits at 290 meters, 60 meters closer to the car park."
    assert missing(ev, said) == []
    assert missing(ev, said.replace("60", "70")) == [70.0]  # no such difference
    assert missing(ev, "Sea Holly costs £420 and sits at 290 meters, 60 meters from the "
                       "car park.") == [60.0]  # no word announces a difference
