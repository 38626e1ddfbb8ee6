"""Seats: who answers a question (a model, a person, a script, a bot) and how an answer is
read (plain text, names, echoes, the terminal's forms)."""
